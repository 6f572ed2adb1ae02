"""make bench: attnc against its peers on the same inputs, every output checked against fp64 first.

One run measures the machine's limits (FMA and bf16 dot-product peaks, sgemm, DRAM read bandwidth), times workloads
W1-W6 and a sequence-length sweep with attnc (attn-run --bench) and every peer that can run here,
each in its own process pinned to THREADS threads, then how long `attnc gen` takes for one spec
and attn-run's peak memory at S=32768. It prints a table and writes BUILD/bench/results.json,
results.md and gflops_vs_seq.png. A wrong result anywhere makes it exit 1.

Issue 20's bf16 / f16 rows follow: W1 (none, causal), W3, W4 and W6 with inputs rounded to the
dtype, timed with attnc's kernel of that dtype (bench/lowp_run.cpp), attnc's fp32 kernel on the
same inputs, NumPy unfused (fp32), oneDNN (bf16) and ONNX Runtime (f16), plus a bf16 sweep line.
Their kernels are a library of their own (with the fp32 kernels they are compared with).

Usage: run_bench.py BUILD_DIR
Environment: BENCH_QUICK=1 (3 runs, short sweep, no gen timing or memory step), THREADS (2),
BENCH_RUNS (10; workloads over 10 GFLOP take half, at least 3; under 1 GFLOP three times as many),
BENCH_ONLY=f32 or lowp (only the fp32 rows, or only the bf16 / f16 ones; default both),
BENCH_WORKLOADS=W1,W4 (only the workloads of those names, and no sweep).
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
import lowp_targets
import report
from implementations import attnc_variants, lowp_implementations, peers
from limits import busy_fraction, machine_info, measure_limits
from measure import MAX_WINDOW_CALLS, WINDOW_MS, measure, save_inputs
from workloads import lowp_workloads, rss_workload, sweep, workloads

BIG_WORKLOAD_FLOPS = 10e9
SMALL_WORKLOAD_FLOPS = 1e9
BUSY = 0.1  # share of the CPUs other jobs use, above which the times are not to be trusted


class Settings:
    def __init__(self):
        self.quick = os.environ.get("BENCH_QUICK", "0") == "1"
        self.threads = int(os.environ.get("THREADS", "2"))
        self.runs = int(os.environ.get("BENCH_RUNS", "3" if self.quick else "10"))
        self.warmup = 1 if self.quick else 3
        self.only = os.environ.get("BENCH_ONLY", "")
        if self.only not in ("", "f32", "lowp"):
            sys.exit(f"BENCH_ONLY is '{self.only}', expected f32 or lowp (or unset for both)")
        self.names = [n for n in os.environ.get("BENCH_WORKLOADS", "").split(",") if n]

    def runs_for(self, workload):
        # Runs of a few milliseconds are at the mercy of the scheduler: take three times as many.
        if workload.flops() < SMALL_WORKLOAD_FLOPS and not self.quick:
            return 3 * self.runs
        return max(3, self.runs // 2) if workload.flops() > BIG_WORKLOAD_FLOPS else self.runs

    def as_dict(self):
        return {"quick": self.quick, "threads": self.threads, "runs": self.runs, "warmup": self.warmup,
                "only": self.only or "all", "workloads": self.names or "all",
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
    """The fp32 and the bf16 / f16 workloads to time, and the shapes on the sweep lines (W1 none and
    W1 none bf16 are on them, timed once)."""
    def chosen(planned, sweep_workloads):
        if settings.names:
            return [w for w in planned if w.name in settings.names], []
        measured = {w.shape for w in planned}
        return planned + [w for w in sweep_workloads if w.shape not in measured], sweep_workloads
    f32, f32_sweep = chosen(workloads(), sweep(settings.quick)) if settings.only != "lowp" else ([], [])
    lowp, lowp_sweep = chosen(lowp_workloads(), sweep(settings.quick, "bf16")) if settings.only != "f32" else ([], [])
    return f32, lowp, {w.shape for w in f32_sweep + lowp_sweep}


def print_limits(machine, limits, settings):
    blas = limits["blas"]
    print(f"machine: {machine['model_name']}, {machine['nproc']} cores, avx2 {machine['avx2']}, "
          f"avx512f {machine['avx512f']}; {settings.threads} threads, {settings.runs} runs"
          f"{' (BENCH_QUICK)' if settings.quick else ''}")
    print(f"limits: FMA peak {limits['fma_peak_gflops']} GFLOP/s, sgemm 2048 {limits['sgemm_gflops']} GFLOP/s "
          f"({blas['name']} {blas['version']}, core {blas.get('runtime_core', '?')}, OPENBLAS_CORETYPE "
          f"{blas['OPENBLAS_CORETYPE']}), DRAM read {limits['read_gbps']} GB/s", flush=True)
    if limits["bf16_peak_gflops"] is None:  # the bf16 rows then show no % of it
        print(f"limits: bf16 dot-product peak: skipped: {limits['bf16_peak_skipped']}")
    else:
        print(f"limits: bf16 dot-product peak (vdpbf16ps, 64 FLOP each) {limits['bf16_peak_gflops']} GFLOP/s, "
              f"one core {limits['bf16_peak_gflops_1t']}", flush=True)


def generation_and_memory(settings, build, spec, attnc, out_dir, env):
    """attnc gen's seconds for one spec and attn-run's peak RSS; both None under BENCH_QUICK or
    when only some rows are timed."""
    if settings.quick or settings.only == "lowp" or settings.names:
        why = "BENCH_QUICK" if settings.quick else "BENCH_ONLY or BENCH_WORKLOADS"
        print(f"attnc gen for one spec, peak RSS at S=32768: skipped ({why})")
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
    main_rows, lowp_rows = report.split(rows)
    if main_rows:
        print(f"\nGFLOP/s: 4*B*H*Sq*Sk*D (causal: kept pairs only) plus the block's projections; % of the "
              f"{limits['fma_peak_gflops']} GFLOP/s FMA peak; KV GB/s: K and V bytes / time (decode);\n"
              f"peer/attnc: the peer's median / attnc's (above 1: attnc faster); W6 peers: core + NumPy sgemm "
              f"projections.")
    if lowp_rows:
        print(f"\nbf16 / f16 rows: inputs rounded to the dtype, fp64 reference on the rounded values; impl (type "
              f"it stores tensors in); % bf16 peak: of the {limits['bf16_peak_gflops']} GFLOP/s vdpbf16ps peak; "
              f"KV bytes counted in that type, % of the {limits['read_gbps']} GB/s DRAM read;\n"
              f"time/attnc: the row's median / attnc's kernel of the row's dtype (attnc-f32: its fp32 kernel, "
              f"so above 1 is the low-precision speed-up).")
        print("issue 20's targets, this run:\n" + lowp_targets.text(lowp_targets.evaluate(rows)))
    print(f"results: {out_dir}/results.json and results.md; plot: "
          + (f"skipped: {plot_skipped}" if plot_skipped else f"{out_dir}/gflops_vs_seq.png"))
    for name, why in skipped.items():
        print(f"skipped: {name}: {why}")
    for r in rows:
        if r["status"] == "error" and r["impl"] not in required:
            print(f"warning: optional peer {r['impl']} failed on {r['workload']}: {r['message']}", file=sys.stderr)


def generate(build, specs, out_dir, what):
    """The library of specs in out_dir (reused when unchanged) and its generation seconds or None."""
    library, seconds = kernels.generate(build, specs, out_dir)
    print(f"{what}: {len(specs)} specs, " + (f"generated in {seconds:.1f} s" if seconds is not None
                                              else "reused (attnc and specs unchanged)"), flush=True)
    return library, seconds


def setup_f32(build, specs, out_dir, settings, env, machine):
    """(library, gen seconds, implementations (attnc first), {name: why skipped}) for the fp32 rows."""
    if not specs:
        return None, None, [], {}
    library, seconds = generate(build, specs, os.path.join(out_dir, "kernels"), "kernels")
    own, skipped = attnc_variants(build, library, settings.threads, env, machine)
    available, skipped_peers = peers(out_dir, settings.threads, env)
    skipped.update(skipped_peers)
    return library, seconds, own + available, skipped


def setup_lowp(build, specs, out_dir, settings, env):
    """(library, gen seconds, implementations per workload, {name: why skipped}) for the bf16 / f16 rows:
    their kernels, with the fp32 ones they are compared with, are a library of their own, so that a
    run of either set alone reuses the other's."""
    if not specs:
        return None, None, None, {}
    library, seconds = generate(build, specs, os.path.join(out_dir, "kernels_lowp"),
                                "bf16 / f16 kernels (with their fp32 ones)")
    for_workload, skipped = lowp_implementations(build, library, out_dir, settings.threads, env)
    return library, seconds, for_workload, skipped


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
    f32_planned, lowp_planned, sweep_shapes = plan(settings)
    specs = sorted({w.spec for w in f32_planned})
    library, gen_seconds, implementations, skipped = setup_f32(build, specs, out_dir, settings, env, machine)
    attnc = implementations[0] if implementations else None
    lowp_specs = sorted({w.spec for w in lowp_planned} | {w.in_f32().spec for w in lowp_planned})
    lowp_library, lowp_gen_seconds, lowp_for, skipped_lowp = setup_lowp(build, lowp_specs, out_dir, settings, env)
    skipped.update(skipped_lowp)
    for name, why in skipped.items():
        print(f"{name}: skipped: {why}")

    rows = []
    for seed, workload in enumerate(f32_planned + lowp_planned):
        chosen = implementations if workload.dtype == "f32" else lowp_for(workload)
        workload_rows = measure(workload, chosen, os.path.join(out_dir, "data"), settings, env, limits, seed)
        for row in workload_rows:
            row["on_sweep"] = workload.shape in sweep_shapes
        progress(workload_rows)
        rows += workload_rows
    gen_one, rss = generation_and_memory(settings, build, specs[0] if specs else None, attnc, out_dir, env)
    busy_after = busy_fraction()

    required = {i.name for i in implementations if not i.optional} | ({"attnc", "attnc-f32"} if lowp_for else set())
    failures = failures_of(rows, required)
    plot_skipped = report.plot_sweep(os.path.join(out_dir, "gflops_vs_seq.png"), rows)
    command = (f"BENCH_QUICK={int(settings.quick)} THREADS={settings.threads} BENCH_RUNS={settings.runs} "
               + (f"BENCH_ONLY={settings.only} " if settings.only else "")
               + (f"BENCH_WORKLOADS={','.join(settings.names)} " if settings.names else "")
               + f"make bench BUILD={build}")
    report.write_json(os.path.join(out_dir, "results.json"), {
        "started": started.isoformat(timespec="seconds"), "command": command, "settings": settings.as_dict(),
        "cpu_busy_other_jobs": {"before": busy_before, "after": busy_after},
        "machine": machine, "limits": limits, "peers_skipped": skipped, "plot_skipped": plot_skipped,
        "attnc": {"library": library, "specs": specs, "gen_seconds_all_specs": gen_seconds,
                  "gen_seconds_one_spec": gen_one, "gen_one_spec": specs[0] if specs else None, "peak_rss": rss,
                  "lowp_library": lowp_library, "lowp_specs": lowp_specs,
                  "lowp_gen_seconds_all_specs": lowp_gen_seconds},
        "lowp_targets": lowp_targets.evaluate(rows), "results": rows, "failures": failures})
    with open(os.path.join(out_dir, "results.md"), "w") as f:
        f.write(report.table_markdown(rows) + "\n")
    print_summary(rows, limits, out_dir, plot_skipped, skipped, required)
    warn_if_busy(busy_after, "after")
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
