"""make bench: attnc against its peers on the same inputs, every output checked against fp64 first.

One run measures the machine's limits (FMA and bf16 dot-product peaks, sgemm, DRAM read bandwidth), times workloads
W1-W6 and a sequence-length sweep with attnc (attn-run --bench) and every peer that can run here,
each in its own process pinned to THREADS threads, then how long `attnc gen` takes for one spec
and attn-run's peak memory at S=32768. It prints a table and writes BUILD/bench/results.json,
results.md and gflops_vs_seq.png. A wrong result anywhere makes it exit 1.

Usage: run_bench.py BUILD_DIR
Environment: BENCH_QUICK=1 (3 runs, short sweep, no gen timing or memory step), THREADS (2),
BENCH_RUNS (10; workloads over 10 GFLOP take half, at least 3; under 1 GFLOP three times as many).
Each implementation's calls of a workload span at least measure.WINDOW_MS: a shorter span is timed
again with the calls that fill it (measure.calls_for_window), and that second timing is reported.
"""
import quiet_driver  # noqa: F401  (first: before numpy)
import datetime
import json
import os
import subprocess
import sys

import kernels
import report
from implementations import attnc_variants, peers
from limits import busy_fraction, machine_info, measure_limits
from measure import MAX_WINDOW_CALLS, WINDOW_MS, measure, save_inputs
from workloads import rss_workload, sweep, workloads

BIG_WORKLOAD_FLOPS = 10e9
SMALL_WORKLOAD_FLOPS = 1e9
BUSY = 0.1  # share of the CPUs other jobs use, above which the times are not to be trusted


class Settings:
    def __init__(self):
        self.quick = os.environ.get("BENCH_QUICK", "0") == "1"
        self.threads = int(os.environ.get("THREADS", "2"))
        self.runs = int(os.environ.get("BENCH_RUNS", "3" if self.quick else "10"))
        self.warmup = 1 if self.quick else 3

    def runs_for(self, workload):
        # Runs of a few milliseconds are at the mercy of the scheduler: take three times as many.
        if workload.flops() < SMALL_WORKLOAD_FLOPS and not self.quick:
            return 3 * self.runs
        return max(3, self.runs // 2) if workload.flops() > BIG_WORKLOAD_FLOPS else self.runs

    def as_dict(self):
        return {"quick": self.quick, "threads": self.threads, "runs": self.runs, "warmup": self.warmup,
                "runs_over_10_gflop": max(3, self.runs // 2), "runs_under_1_gflop": 3 * self.runs,
                "window_ms": WINDOW_MS, "max_window_calls": MAX_WINDOW_CALLS}


def pinned_env(threads):
    env = dict(os.environ)
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "HL_NUM_THREADS"):
        env[name] = str(threads)
    return env


def peak_rss(attnc, data_dir, env):
    """attn-run's peak RSS for W2's spec at S=32768, one timed run, less its tensors' bytes."""
    workload = rss_workload()
    arrays = workload.make_inputs(seed=99)
    save_inputs(data_dir, arrays)
    out_path = os.path.join(data_dir, "out.npy")
    # attn-run starts from a small Python of its own: a child forked straight from this process
    # (which holds the benchmark's arrays) would count this process's pages in its peak RSS.
    measure_child = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:]).returncode; "
                     "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
                     "sys.exit(code)")
    command = [sys.executable, "-c", measure_child] + attnc.command(workload, data_dir, out_path, 0, 1)
    child = subprocess.run(command, capture_output=True, text=True, env=env)
    if child.returncode != 0:
        raise RuntimeError(f"attn-run failed at S={workload.seq_q}: {child.stderr.strip()}")
    timing = child.stdout
    max_rss_kib = int(child.stderr.strip().splitlines()[-1])
    tensor_bytes = sum(a.nbytes for a in arrays.values()) + arrays["q"].nbytes  # q, k, v and out
    rss_bytes = max_rss_kib * 1024
    for name in os.listdir(data_dir):
        os.remove(os.path.join(data_dir, name))
    return {"workload": workload.label, "spec": workload.spec, "peak_rss_mib": rss_bytes / 2**20,
            "tensor_mib": tensor_bytes / 2**20, "rss_beyond_tensors_mib": (rss_bytes - tensor_bytes) / 2**20,
            "run_ms": json.loads(timing)["median_ms"]}


def warn_if_busy(busy, when):
    if busy > BUSY:
        print(f"warning: other jobs kept {100 * busy:.0f}% of the CPUs busy {when} the run; "
              "its times are noisy", file=sys.stderr)


def failures_of(rows, required):
    """A wrong result from anyone, or a failed run of a required implementation."""
    failures = []
    for r in rows:
        if r["status"] == "wrong":
            failures.append(f"{r['impl']} on {r['workload']}: max |out - fp64| = {r['max_abs_err']:.3g} "
                            f"> {r['tolerance']:.3g}")
        elif r["status"] == "error" and r["impl"] in required:
            failures.append(f"{r['impl']} on {r['workload']}: failed: {r['message']}")
    return failures


def progress(rows):
    times = ", ".join(f"{r['impl']} {r['median_ms']:.1f} ms" if "median_ms" in r else f"{r['impl']} {r['status']}"
                      for r in rows)
    print(f"  {rows[0]['workload']}: {times}", flush=True)


def plan(settings):
    """The workloads to time, and the shapes on the sweep line (W1 none is one of them, timed once)."""
    planned = workloads()
    measured = {w.shape for w in planned}
    sweep_workloads = sweep(settings.quick)
    return planned + [w for w in sweep_workloads if w.shape not in measured], {w.shape for w in sweep_workloads}


def print_limits(machine, limits, settings):
    blas = limits["blas"]
    print(f"machine: {machine['model_name']}, {machine['nproc']} cores, avx2 {machine['avx2']}, "
          f"avx512f {machine['avx512f']}; {settings.threads} threads, {settings.runs} runs"
          f"{' (BENCH_QUICK)' if settings.quick else ''}")
    print(f"limits: FMA peak {limits['fma_peak_gflops']} GFLOP/s, sgemm 2048 {limits['sgemm_gflops']} GFLOP/s "
          f"({blas['name']} {blas['version']}, core {blas.get('runtime_core', '?')}, OPENBLAS_CORETYPE "
          f"{blas['OPENBLAS_CORETYPE']}), DRAM read {limits['read_gbps']} GB/s", flush=True)
    if limits["bf16_peak_gflops"] is None:
        print(f"limits: bf16 dot-product peak: skipped: {limits['bf16_peak_skipped']}")
    else:
        print(f"limits: bf16 dot-product peak (vdpbf16ps, 64 FLOP each) {limits['bf16_peak_gflops']} GFLOP/s, "
              f"one core {limits['bf16_peak_gflops_1t']}", flush=True)


def generation_and_memory(settings, build, spec, attnc, out_dir, env):
    """attnc gen's seconds for one spec and attn-run's peak RSS; both None under BENCH_QUICK."""
    if settings.quick:
        print("attnc gen for one spec, peak RSS at S=32768: skipped (BENCH_QUICK)")
        return None, None
    gen_one = kernels.time_one_spec(build, spec, os.path.join(out_dir, "gen_one_spec"))
    print(f"attnc gen, one spec, --target host: {gen_one:.1f} s ({spec})", flush=True)
    rss = peak_rss(attnc, os.path.join(out_dir, "rss"), env)
    print(f"peak RSS, {rss['workload']}: {rss['peak_rss_mib']:.0f} MiB, {rss['rss_beyond_tensors_mib']:.0f} MiB "
          f"beyond the {rss['tensor_mib']:.0f} MiB of tensors ({rss['run_ms'] / 1e3:.1f} s run)", flush=True)
    return gen_one, rss


def print_summary(rows, limits, out_dir, plot_skipped, skipped, required):
    print()
    print(report.table_text(rows))
    print(f"\nGFLOP/s: 4*B*H*Sq*Sk*D (causal: kept pairs only) plus the block's projections; % of the "
          f"{limits['fma_peak_gflops']} GFLOP/s FMA peak; KV GB/s: K and V bytes / time (decode);\n"
          f"peer/attnc: the peer's median / attnc's (above 1: attnc faster); W6 peers: core + NumPy sgemm "
          f"projections.")
    print(f"results: {out_dir}/results.json and results.md; plot: "
          + (f"skipped: {plot_skipped}" if plot_skipped else f"{out_dir}/gflops_vs_seq.png"))
    for name, why in skipped.items():
        print(f"skipped: {name}: {why}")
    for r in rows:
        if r["status"] == "error" and r["impl"] not in required:
            print(f"warning: optional peer {r['impl']} failed on {r['workload']}: {r['message']}", file=sys.stderr)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: run_bench.py BUILD_DIR")
    build = os.path.abspath(sys.argv[1])
    settings = Settings()
    env = pinned_env(settings.threads)
    out_dir = os.path.join(build, "bench")
    os.makedirs(out_dir, exist_ok=True)
    started = datetime.datetime.now(datetime.timezone.utc)
    busy_before = busy_fraction()
    warn_if_busy(busy_before, "before")

    machine = machine_info()
    limits = measure_limits(out_dir, settings.threads, env)
    print_limits(machine, limits, settings)
    planned, sweep_shapes = plan(settings)
    specs = sorted({w.spec for w in planned})
    library, gen_seconds = kernels.generate(build, specs, os.path.join(out_dir, "kernels"))
    print(f"kernels: {len(specs)} specs, " + (f"generated in {gen_seconds:.1f} s" if gen_seconds is not None
                                               else "reused (attnc and specs unchanged)"), flush=True)
    own, skipped = attnc_variants(build, library, settings.threads, env, machine)
    attnc = own[0]
    available, skipped_peers = peers(out_dir, settings.threads, env)
    skipped.update(skipped_peers)
    for name, why in skipped.items():
        print(f"{name}: skipped: {why}")
    implementations = own + available

    rows = []
    for seed, workload in enumerate(planned):
        workload_rows = measure(workload, implementations, os.path.join(out_dir, "data"), settings, env,
                                limits["fma_peak_gflops"], seed)
        for row in workload_rows:
            row["on_sweep"] = workload.shape in sweep_shapes
        progress(workload_rows)
        rows += workload_rows
    gen_one, rss = generation_and_memory(settings, build, specs[0], attnc, out_dir, env)
    busy_after = busy_fraction()

    required = {i.name for i in implementations if not i.optional}
    failures = failures_of(rows, required)
    plot_skipped = report.plot_sweep(os.path.join(out_dir, "gflops_vs_seq.png"), rows)
    command = (f"BENCH_QUICK={int(settings.quick)} THREADS={settings.threads} BENCH_RUNS={settings.runs} "
               f"make bench BUILD={build}")
    report.write_json(os.path.join(out_dir, "results.json"), {
        "started": started.isoformat(timespec="seconds"), "command": command, "settings": settings.as_dict(),
        "cpu_busy_other_jobs": {"before": busy_before, "after": busy_after},
        "machine": machine, "limits": limits, "peers_skipped": skipped, "plot_skipped": plot_skipped,
        "attnc": {"library": library, "specs": specs, "gen_seconds_all_specs": gen_seconds,
                  "gen_seconds_one_spec": gen_one, "gen_one_spec": specs[0], "peak_rss": rss},
        "results": rows, "failures": failures})
    with open(os.path.join(out_dir, "results.md"), "w") as f:
        f.write(report.table_markdown(rows) + "\n")
    print_summary(rows, limits, out_dir, plot_skipped, skipped, required)
    warn_if_busy(busy_after, "after")
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
