"""Fractions of the machine's limits, each limit read right next to the kernel it judges.

The FMA peak and the read bandwidth of these shared VMs move by 20% within an hour, so a limit
read once at the start of `make bench` and a kernel timed minutes later can be paired with the
wrong minute. Here every round reads the FMA peak right before each of W1 (none and causal),
W2, W3 and W5, and the read bandwidth right before W4; each round gives its own fractions, and
the table shows their medians. Every output is checked against fp64 in the first round.
Each kernel is timed over about as long as one reading of its limit takes (measure.WINDOW_MS of
calls, at least BENCH_RUNS // 2): five calls of a 10 ms kernel last 50 ms, which one busy moment
of a neighbour on the host can cover whole, while the peak is the median of five 0.3 s readings.

Usage: paired.py BUILD_DIR     Environment: THREADS (2), BENCH_RUNS (10), BENCH_QUICK=1 (3 rounds)
Writes BUILD/bench/paired.json.
"""
import quiet_driver  # noqa: F401  (first: before numpy)
import json
import os
import sys

import numpy as np

import kernels
from implementations import Attnc
from limits import compile_helper, run_json
from measure import WINDOW_MS, calls_for_window
from scaling import pinned_env, timed
from workloads import workloads

# (workload label prefix, which limit judges it, the target fraction)
JUDGED = (("W1 B1 H12 S1024 D64 none", "fma", 0.80), ("W1 B1 H12 S1024 D64 causal", "fma", 0.75),
          ("W2 B1 H8 S4096 D64 causal", "fma", 0.75), ("W3 B8 H8 S512 D64 none", "fma", 0.80),
          ("W5 B1 H16 S2048 D128 causal", "fma", 0.75), ("W4 B1 H32 Sq1 Sk4096 D128 none", "read", 0.85))


def round_settings():
    """(threads, runs per timing, rounds) from THREADS, BENCH_RUNS and BENCH_QUICK."""
    quick = os.environ.get("BENCH_QUICK", "0") == "1"
    return (int(os.environ.get("THREADS", "2")), int(os.environ.get("BENCH_RUNS", "3" if quick else "10")),
            3 if quick else 5)


def write_rounds(path, threads, rounds, runs, calls, rows):
    with open(path, "w") as f:
        json.dump({"threads": threads, "rounds": rounds, "runs": runs, "window_ms": WINDOW_MS, "calls": calls,
                   "rows": rows}, f, indent=1)


def main():
    build = os.path.abspath(sys.argv[1])
    threads, runs, rounds = round_settings()
    out_dir = os.path.join(build, "bench")
    data_dir = os.path.join(out_dir, "paired_data")
    by_label = {w.label: w for w in workloads()}
    judged = [(by_label[label], limit, target) for label, limit, target in JUDGED]
    library, _ = kernels.generate(build, sorted({w.spec for w, _, _ in judged}), os.path.join(out_dir, "paired_kernels"))
    fma = compile_helper("fma_peak.cpp", os.path.join(out_dir, "fma_peak"))
    bandwidth = compile_helper("read_bandwidth.cpp", os.path.join(out_dir, "read_bandwidth"))
    attnc = Attnc(build, library, threads, pinned_env(threads))

    def read_limit(limit):
        if limit == "fma":
            return run_json([fma, str(os.cpu_count())])["fma_peak_gflops"]
        return run_json([bandwidth, str(threads), "1024"])["read_gbps"]

    samples = {w.label: {"limit": [], "rate": []} for w, _, _ in judged}
    calls = {}  # per workload: the calls that fill WINDOW_MS, from its first round
    for round_index in range(rounds):
        for w, limit, _ in judged:
            reading = read_limit(limit)  # just before the kernel it judges (about a second)
            folder = os.path.join(data_dir, w.name + "_" + w.mask)
            first_calls = max(3, runs // 2)
            ms, gflops = timed(attnc, w, folder, calls.get(w.label, first_calls), fresh_inputs=round_index == 0)
            calls.setdefault(w.label, calls_for_window(ms, first_calls))
            rate = w.kv_bytes() / (ms * 1e6) if limit == "read" else gflops
            samples[w.label]["limit"].append(reading)
            samples[w.label]["rate"].append(rate)

    rows = []
    print(f"{'workload':<32} {'limit':>14} {'attnc':>14} {'fraction':>9} {'target':>7}  per round")
    for w, limit, target in judged:
        s = samples[w.label]
        fractions = [r / l for r, l in zip(s["rate"], s["limit"])]
        fraction = float(np.median(fractions))
        unit = "GB/s" if limit == "read" else "GFLOP/s"
        rows.append({"workload": w.label, "limit": "read bandwidth" if limit == "read" else "FMA peak",
                     "unit": unit, "limit_median": float(np.median(s["limit"])),
                     "attnc_median": float(np.median(s["rate"])), "fraction_median": fraction,
                     "fractions": fractions, "target": target})
        print(f"{w.label:<32} {np.median(s['limit']):8.1f} {unit:<5} {np.median(s['rate']):8.1f} {unit:<5} "
              f"{100 * fraction:8.1f}% {100 * target:6.0f}%  " + " ".join(f"{100 * f:.0f}%" for f in fractions))
    print(f"(medians of {rounds} rounds; each round reads the FMA peak on all cores before each FLOP-bound "
          f"workload and the read bandwidth on {threads} threads before W4)")
    write_rounds(os.path.join(out_dir, "paired.json"), threads, rounds, runs, calls, rows)


if __name__ == "__main__":
    main()
