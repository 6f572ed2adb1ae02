"""What every Python peer shares: its command line, its inputs, the timing loop and the JSON it prints.

Every peer (Python or C++) is called as: PEER IN_DIR OUT.npy none|causal THREADS WARMUP RUNS [DTYPE]
It reads IN_DIR/{q,k,v}.npy ([B,S,H,D] float32), writes its output [B,Sq,H,Dv] to OUT.npy and
prints one JSON line: {"median_ms": ...} or {"skipped": "why"}. DTYPE (default f32), where a
peer takes it, is the type it computes in; the harness has rounded the inputs to it already.
"""
import json
import sys
import time

import numpy as np


class PeerArgs:
    def __init__(self, argv):
        if len(argv) not in (7, 8):
            sys.exit(f"usage: {argv[0]} IN_DIR OUT.npy none|causal THREADS WARMUP RUNS [DTYPE]")
        self.folder, self.out_path, self.mask = argv[1], argv[2], argv[3]
        self.threads, self.warmup, self.runs = int(argv[4]), int(argv[5]), int(argv[6])
        self.dtype = argv[7] if len(argv) == 8 else "f32"
        self.causal = self.mask == "causal"

    def load_qkv(self):
        return tuple(np.load(f"{self.folder}/{name}.npy") for name in ("q", "k", "v"))


def causal_keep(seq_q, seq_k):
    """[Sq, Sk] bool: key k is kept for query i when k <= i + Sk - Sq (bottom-right aligned)."""
    return np.arange(seq_k)[None, :] <= np.arange(seq_q)[:, None] + (seq_k - seq_q)


def time_and_report(args, run, **extra):
    """Calls run() WARMUP + RUNS times, saves the last output and prints the median time."""
    out = None
    for _ in range(args.warmup):
        out = run()
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        out = run()
        times.append((time.perf_counter() - start) * 1e3)
    np.save(args.out_path, np.ascontiguousarray(out, dtype=np.float32))
    print(json.dumps({"median_ms": float(np.median(times)), "min_ms": float(np.min(times)), "runs": args.runs,
                      "threads": args.threads, **extra}))


def skip(reason):
    print(json.dumps({"skipped": reason}))
    sys.exit(0)
