"""Issue 20's targets for the bf16 / f16 kernels, each read against its limit in the same minute.

paired.py does this for the fp32 kernels; this does it for the low-precision ones. Every round,
for each judged core workload: the limit that judges it (the bf16 dot-product peak before bf16
prefill, the read bandwidth before decode, none before f16 prefill, whose target is a speed-up),
then attnc's kernel of the dtype and attnc's fp32 kernel on the same rounded inputs, in an order
that alternates from round to round. The table shows the medians of the per-round fractions and
speed-ups. Outputs are checked against fp64 in the first round. W6 (the block) stays a one-run
number of run_bench.py.

Usage: lowp_paired.py BUILD_DIR     Environment: THREADS (2), BENCH_RUNS (10), BENCH_QUICK=1 (3 rounds)
Writes BUILD/bench/lowp_paired.json.
"""
import quiet_driver  # noqa: F401  (first: before numpy)
import os
import sys

import numpy as np

import kernels
from implementations import AttncF32, AttncLowp, lowp_driver
from limits import compile_helper, run_json
from lowp_targets import TARGETS
from measure import TOLERANCES, calls_for_window, check, save_inputs
from paired import round_settings, write_rounds
from reference import core_reference
from scaling import pinned_env
from workloads import DTYPE_BYTES, lowp_workloads


def judged_workloads():
    """The core workloads some target judges, in lowp_workloads' order."""
    labels = {label for _, target_labels, _, _, _ in TARGETS for label in target_labels}
    return [w for w in lowp_workloads() if w.label in labels and not w.block]


def timed(implementation, workload, folder, runs, first_round):
    """The implementation's median ms on the inputs in folder; in the first round its output is checked."""
    out_path = os.path.join(folder, f"out_{implementation.name}.npy")
    result = implementation.run(workload, folder, out_path, 2, runs)
    if "error" in result:
        sys.exit(f"{implementation.name} failed on {workload.label}: {result['error']}")
    if first_round:
        arrays = {name: np.load(os.path.join(folder, name + ".npy")) for name in ("q", "k", "v")}
        ref = core_reference(arrays["q"], arrays["k"], arrays["v"], workload.mask == "causal")
        err, tolerance, ok = check(np.load(out_path), ref, TOLERANCES[implementation.storage(workload)])
        if not ok:
            sys.exit(f"wrong result: {implementation.name} on {workload.label}: max error {err:.3g} > {tolerance:.3g}")
    return result["median_ms"]


def main():
    build = os.path.abspath(sys.argv[1])
    threads, runs, rounds = round_settings()
    out_dir = os.path.join(build, "bench")
    data_dir = os.path.join(out_dir, "lowp_paired_data")
    judged = judged_workloads()
    # The same spec list as a full run_bench.py run, so that its library is reused.
    specs = sorted({w.spec for w in lowp_workloads()} | {w.in_f32().spec for w in lowp_workloads()})
    library, _ = kernels.generate(build, specs, os.path.join(out_dir, "kernels_lowp"))
    env = pinned_env(threads)
    lowp = AttncLowp(build, library, lowp_driver(build, out_dir), threads, env)
    fp32 = AttncF32(build, library, threads, env)
    bf16_peak = compile_helper("bf16_peak.cpp", os.path.join(out_dir, "bf16_peak"))
    bandwidth = compile_helper("read_bandwidth.cpp", os.path.join(out_dir, "read_bandwidth"))

    def read_limit(workload):
        """(limit name, reading) for the workload, or (None, None) where a speed-up is the target."""
        if workload.seq_q == 1:
            return "read", run_json([bandwidth, str(threads), "1024"])["read_gbps"]
        if workload.dtype == "bf16":
            return "bf16", run_json([bf16_peak, str(os.cpu_count())]).get("bf16_peak_gflops")
        return None, None

    samples = {w.label: {"limit": [], "fraction": [], "speedup": []} for w in judged}
    calls = {}
    for round_index in range(rounds):
        for seed, w in enumerate(judged):
            folder = os.path.join(data_dir, f"{w.name}_{w.mask}_{w.dtype}")
            if round_index == 0:
                save_inputs(folder, w.make_inputs(seed))
            limit, reading = read_limit(w)  # just before the kernels it judges
            first_calls = max(3, runs // 2)
            order = (lowp, fp32) if round_index % 2 == 0 else (fp32, lowp)
            ms = {i.name: timed(i, w, folder, calls.get(w.label, first_calls), round_index == 0) for i in order}
            calls.setdefault(w.label, calls_for_window(ms["attnc"], first_calls))
            s = samples[w.label]
            s["speedup"].append(ms["attnc-f32"] / ms["attnc"])
            if limit == "read":
                s["limit"].append(reading)
                s["fraction"].append(w.kv_bytes(DTYPE_BYTES[w.dtype]) / (ms["attnc"] * 1e6) / reading)
            elif limit == "bf16" and reading:
                s["limit"].append(reading)
                s["fraction"].append(w.flops() / (ms["attnc"] * 1e6) / reading)

    rows = []
    print(f"{'workload':<36} {'limit':>16} {'fraction':>9} {'vs fp32':>8}  per round (fraction / speed-up)")
    for w in judged:
        s = samples[w.label]
        unit = "GB/s" if w.seq_q == 1 else "GFLOP/s"
        row = {"workload": w.label, "speedup_median": float(np.median(s["speedup"])), "speedups": s["speedup"],
               "limit": ("read bandwidth" if w.seq_q == 1 else "bf16 peak") if s["limit"] else None,
               "limit_median": float(np.median(s["limit"])) if s["limit"] else None,
               "fraction_median": float(np.median(s["fraction"])) if s["fraction"] else None,
               "fractions": s["fraction"]}
        rows.append(row)
        limit = f"{row['limit_median']:8.1f} {unit:<7}" if s["limit"] else f"{'-':>16}"
        fraction = f"{100 * row['fraction_median']:8.1f}%" if s["fraction"] else f"{'-':>9}"
        per_round = (" ".join(f"{100 * f:.0f}%/{x:.2f}x" for f, x in zip(s["fraction"], s["speedup"]))
                     if s["fraction"] else " ".join(f"{x:.2f}x" for x in s["speedup"]))
        print(f"{w.label:<36} {limit} {fraction} {row['speedup_median']:7.2f}x  {per_round}")
    print(f"(medians of {rounds} rounds; vs fp32: attnc's fp32 kernel's time over the row's bf16 or f16 "
          f"kernel's, the two timed back to back in alternating order)")
    write_rounds(os.path.join(out_dir, "lowp_paired.json"), threads, rounds, runs, calls, rows)


if __name__ == "__main__":
    main()
