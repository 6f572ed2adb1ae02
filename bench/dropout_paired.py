"""Issue 33's dropout rows: what dropout=0.1 costs attnc's forward and backward, paired.

Every round times, in an order that rotates from round to round, W1 (B1 H12 S1024 D64, none and
causal, fp32) as four attnc kernels: the forward without and with dropout=0.1 (lse=true, as a
training forward keeps it) and the backward without and with it (attn-run --bench each). The
ratios are taken within a round (with / without) and their medians reported, so machine noise
between rounds cancels. The first round checks the dropout forward against an fp64 NumPy forward
with its own Philox 4x32-10 (docs/DSL.md's keep rule).

Usage: dropout_paired.py BUILD_DIR   Environment: THREADS (2), ROUNDS (7), RUNS (5 calls per timing)
"""
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
from test_dropout import keep_factor  # noqa: E402  (the NumPy Philox of the Python suite)
from backward_paired import attn_run  # noqa: E402

SHAPE = (1, 1024, 12, 64)
SEED, OFFSET, P = 0x5EED, 12, np.float32(0.1)


def reference_forward(q, k, v, z, causal):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.einsum("bhqk,bkhd->bqhd", p * z, v)


def main():
    build = os.path.abspath(sys.argv[1])
    threads, rounds, runs = (int(os.environ.get(n, d)) for n, d in (("THREADS", 2), ("ROUNDS", 7), ("RUNS", 5)))
    work = tempfile.mkdtemp(prefix="dropout_paired_")
    specs = []
    for causal in (False, True):
        base = f"heads=12 head_dim=64{' mask=causal' if causal else ''}"
        for drop in ("", " dropout=0.1"):
            specs += [base + drop + " lse=true", base + drop + " backward=true"]
    subprocess.run([os.path.join(build, "tools", "attnc"), "gen", *sum((["--spec", s] for s in specs), []),
                    "--target", "host", "--shared", "--basename", "w1", "-o", work], check=True, capture_output=True)
    library = os.path.join(work, "w1.so")
    rng = np.random.default_rng(1)
    inputs = {n: rng.standard_normal(SHAPE).astype(np.float32) for n in ("q", "k", "v", "dout")}
    path = {n: os.path.join(work, f"{n}.npy") for n in inputs}
    for n, a in inputs.items():
        np.save(path[n], a)
    for n, value in (("seed", SEED), ("offset", OFFSET)):
        path[n] = os.path.join(work, f"{n}.npy")
        np.save(path[n], np.array(value, dtype=np.uint64))
    z = keep_factor(1, 12, 1024, 1024, SEED, OFFSET, P)
    workloads = [(causal, drop) for causal in (False, True) for drop in (False, True)]
    times = {}
    for r in range(rounds):
        order = workloads[r % len(workloads):] + workloads[:r % len(workloads)]
        for causal, drop in order:
            kernel = f"attn_core_h12_kv12_d64_f32{'_causal' if causal else ''}"
            suffix = "_drop3dcccccd" if drop else ""
            given = {n: path[n] for n in ("q", "k", "v")}
            if drop:
                given.update(seed=path["seed"], offset=path["offset"])
            out, lse = os.path.join(work, "out.npy"), os.path.join(work, "lse.npy")
            forward = attn_run(build, library, kernel + "_lse" + suffix, given, {"out": out, "lse": lse}, threads, runs)
            if r == 0 and drop:
                want = reference_forward(inputs["q"], inputs["k"], inputs["v"], z, causal)
                error = float(np.abs(np.load(out) - want).max())
                if error > 1e-4:
                    sys.exit(f"wrong dropout forward (W1{' causal' if causal else ''}): max error {error:.3g}")
            grads = {g: os.path.join(work, f"{g}.npy") for g in ("dq", "dk", "dv")}
            backward = attn_run(build, library, kernel + "_bwd" + suffix,
                                {**given, "out": out, "lse": lse, "dout": path["dout"]}, grads, threads, runs)
            times.setdefault((causal, drop), []).append((forward, backward))
    print(f"W1 (B1 H12 S1024 D64) fp32, {threads} threads, {rounds} rounds, dropout=0.1 vs none (medians)")
    print("| mask | forward | with dropout | ratio | backward | with dropout | ratio |")
    print("|---|---|---|---|---|---|---|")
    for causal in (False, True):
        plain, dropped = times[causal, False], times[causal, True]
        ratios = [[d[i] / p[i] for p, d in zip(plain, dropped)] for i in (0, 1)]
        med = [[statistics.median(t[i] for t in rows) for i in (0, 1)] for rows in (plain, dropped)]
        print(f"| {'causal' if causal else 'none'} | {med[0][0]:.2f} ms | {med[1][0]:.2f} ms | "
              f"{statistics.median(ratios[0]):.3f}x | {med[0][1]:.2f} ms | {med[1][1]:.2f} ms | "
              f"{statistics.median(ratios[1]):.3f}x |")


if __name__ == "__main__":
    main()
