"""Issue 34's document-mask rows: a mask_mod over captured per-token document ids, with its
block mask computed once by the pass kernel (block_mask=pass) and reused by the attention kernel
(block_mask=input), against the unmasked kernel, paired within rounds.

B1 H8 S16384 D64 fp32, 8 documents of uneven lengths. Every round times, in an order that rotates
from round to round, the unmasked kernel, the document-mask kernel given the block mask and the
pass; ratios are taken within a round and their medians reported. The first round checks the pass
against a NumPy classification of the 128 x 128 blocks and the attention on a sample of rows
against an fp64 NumPy reference. FlexAttention (torch.nn.attention.flex_attention with
create_block_mask, on the CPU) is the peer where PyTorch imports; the reason is printed otherwise.

Usage: blockmask_paired.py BUILD_DIR   Environment: THREADS (2), ROUNDS (5), RUNS (3 calls per
timing), SEQ (16384), FLEX (1: also time FlexAttention)
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import attnc  # noqa: E402

HEADS, HEAD_DIM, BLOCK = 8, 64, 128
DOC_FRACTIONS = (3000, 1000, 2500, 700, 4100, 1900, 1384, 1800)  # of 16384: 8 uneven documents
MASK_MOD = 'inputs=doc:i32[B,Sk] mask_mod="doc[b, q] == doc[b, k]"'


def document_ids(seq):
    lengths = [n * seq // 16384 for n in DOC_FRACTIONS]
    lengths[-1] += seq - sum(lengths)
    return np.repeat(np.arange(len(lengths), dtype=np.int32), lengths)[None, :]


def block_classes(doc):
    """The 128 x 128 blocks of doc[q] == doc[k] as empty (0), partial (1) or full (2)."""
    ids = doc[0]
    n = (ids.size + BLOCK - 1) // BLOCK
    out = np.zeros((n, n), np.uint8)
    for i in range(n):
        rows = ids[i * BLOCK:(i + 1) * BLOCK]
        for j in range(n):
            keep = rows[:, None] == ids[None, j * BLOCK:(j + 1) * BLOCK]
            out[i, j] = 2 if keep.all() else 1 if keep.any() else 0
    return out


def check_rows(q, k, v, doc, out, rows):
    ids = doc[0]
    for i in rows:
        keys = np.nonzero(ids == ids[i])[0]
        s = np.einsum("hd,khd->hk", q[0, i].astype(np.float64), k[0, keys].astype(np.float64)) / np.sqrt(HEAD_DIM)
        p = np.exp(s - s.max(-1, keepdims=True))
        want = np.einsum("hk,khd->hd", p / p.sum(-1, keepdims=True), v[0, keys].astype(np.float64))
        error = float(np.abs(out[0, i] - want).max())
        if error > 1e-4:
            sys.exit(f"wrong document-mask output at row {i}: max error {error:.3g}")


def timed(call, runs):
    call()
    best = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        best.append(time.perf_counter() - start)
    return 1e3 * statistics.median(best)


def flex_peer(q, k, v, doc, threads):
    """A timing callable for FlexAttention on the CPU, and the block mask's build time, or a reason."""
    try:
        import torch
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    except Exception as e:  # noqa: BLE001  (any import failure is the reason)
        return None, f"PyTorch's flex_attention does not import: {e}"
    torch.set_num_threads(threads)
    ids = torch.from_numpy(doc[0])
    tq, tk, tv = (torch.from_numpy(x).permute(0, 2, 1, 3).contiguous() for x in (q, k, v))

    def document(b, h, q_idx, kv_idx):
        return ids[q_idx] == ids[kv_idx]

    try:
        start = time.perf_counter()
        mask = create_block_mask(document, None, None, q.shape[1], k.shape[1], device="cpu")
        build_ms = 1e3 * (time.perf_counter() - start)
        compiled = torch.compile(flex_attention)
        with torch.no_grad():
            compiled(tq, tk, tv, block_mask=mask)
    except Exception as e:  # noqa: BLE001
        return None, f"FlexAttention failed on the CPU: {type(e).__name__}: {str(e).splitlines()[0][:200]}"

    def call():
        with torch.no_grad():
            compiled(tq, tk, tv, block_mask=mask)

    return (call, build_ms), None


def main():
    build = os.path.abspath(sys.argv[1])
    threads, rounds, runs, seq = (int(os.environ.get(n, d)) for n, d in
                                  (("THREADS", 2), ("ROUNDS", 5), ("RUNS", 3), ("SEQ", 16384)))
    work = tempfile.mkdtemp(prefix="blockmask_paired_")
    base = f"heads={HEADS} head_dim={HEAD_DIM}"
    specs = [base, f"{base} {MASK_MOD} block_mask=input", f"{base} {MASK_MOD} block_mask=pass"]
    subprocess.run([os.path.join(build, "tools", "attnc"), "gen", *sum((["--spec", s] for s in specs), []),
                    "--target", "host", "--shared", "--basename", "doc", "-o", work], check=True)
    attnc.load_runtime(os.path.join(build, "runtime", "libattnc_runtime.so"))
    lib = attnc.Library(os.path.join(work, "doc.so"))
    kernels = {k.id.rsplit("_", 1)[-1] if "_mmod" in k.id else "none": k for k in lib.kernels}
    for kernel in kernels.values():
        kernel.set_threads(threads)
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((1, seq, HEADS, HEAD_DIM)).astype(np.float32) for _ in range(3))
    doc = document_ids(seq)
    passed = kernels["bmpass"].run(q=q, k=k, doc=doc)["block_mask"]
    classes = block_classes(doc)
    if not np.array_equal(passed[0, 0], classes):
        sys.exit("the pass's block mask differs from the NumPy classification")
    kept = float((classes != 0).mean())
    calls = {
        "none": kernels["none"].bind(q=q, k=k, v=v)[0],
        "doc": kernels["bm"].bind(q=q, k=k, v=v, doc=doc, block_mask=passed)[0],
        "pass": kernels["bmpass"].bind(q=q, k=k, doc=doc)[0],
    }
    out = kernels["bm"].run(q=q, k=k, v=v, doc=doc, block_mask=passed)["out"]
    check_rows(q, k, v, doc, out, rows=[0, 1, 2999, 3000, seq // 2, seq - 1])
    flex, reason = flex_peer(q, k, v, doc, threads) if os.environ.get("FLEX", "1") == "1" else (None, "FLEX=0")
    if flex:
        calls["flex"] = flex[0]
    times = {}
    names = list(calls)
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            times.setdefault(name, []).append(timed(calls[name], runs))
    load = os.getloadavg()
    print(f"B1 H{HEADS} S{seq} D{HEAD_DIM} fp32, 8 documents, {threads} threads, {rounds} rounds, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"blocks (128 x 128): {(classes == 2).sum()} full, {(classes == 1).sum()} partial, "
          f"{(classes == 0).sum()} empty: kept fraction {kept:.4f}")
    med = {n: statistics.median(t) for n, t in times.items()}
    ratio = statistics.median(d / n for d, n in zip(times["doc"], times["none"]))
    share = statistics.median(p / d for p, d in zip(times["pass"], times["doc"]))
    print("| kernel | median | ratio |")
    print("|---|---|---|")
    print(f"| unmasked | {med['none']:.1f} ms | 1 |")
    print(f"| document mask, block mask reused | {med['doc']:.1f} ms | {ratio:.3f}x unmasked "
          f"(target <= {kept + 0.10:.3f}x) |")
    print(f"| block-mask pass | {med['pass']:.2f} ms | {share:.3f}x the attention call (target <= 0.05x) |")
    if flex:
        peer = statistics.median(d / f for d, f in zip(times["doc"], times["flex"]))
        print(f"| FlexAttention (CPU, torch.compile) | {med['flex']:.1f} ms | attnc {peer:.3f}x its time; "
              f"its create_block_mask {flex[1]:.0f} ms once |")
    else:
        print(f"FlexAttention: not timed: {reason}")


if __name__ == "__main__":
    main()
