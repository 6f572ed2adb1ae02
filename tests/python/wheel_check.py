"""Runs inside the wheel test's fresh virtual environment, copied to a folder outside the repository
and started with `python -I` (test_wheel.py): loads a library that the installed `python -m attnc gen`
wrote, through the installed binding, and checks it against an fp64 NumPy attention written here.
Imports nothing of the repository. Usage: wheel_check.py LIBRARY.so KERNEL_ID"""
import pathlib
import sys

import numpy as np

import attnc

HEADS, KV_HEADS, HEAD_DIM = 4, 2, 24  # the spec test_wheel.py generates: GQA, causal


def reference(q, k, v, causal=True):
    """Attention in float64, causal bottom-right aligned (query i sits at key i + Sk - Sq), GQA."""
    q, k, v = (np.asarray(t, dtype=np.float64) for t in (q, k, v))
    group = q.shape[2] // k.shape[2]
    k, v = np.repeat(k, group, axis=2), np.repeat(v, group, axis=2)
    seq_q, seq_k = q.shape[1], k.shape[1]
    scores = np.einsum("bihd,bjhd->bhij", q, k) / np.sqrt(q.shape[3])
    if causal:
        keep = np.arange(seq_k)[None, :] <= np.arange(seq_q)[:, None] + seq_k - seq_q
        scores = np.where(keep, scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return np.einsum("bhij,bjhd->bihd", weights / weights.sum(axis=-1, keepdims=True), v)


def main():
    library, kernel_id = pathlib.Path(sys.argv[1]), sys.argv[2]
    venv = pathlib.Path(sys.prefix).resolve()
    package = pathlib.Path(attnc.__file__).resolve().parent
    assert venv in package.parents, f"attnc imported from {package}, not from the fresh environment {venv}"
    runtime = pathlib.Path(attnc.load_runtime()).resolve()
    assert runtime.parent == package, f"the runtime came from {runtime}, not from the installed package {package}"

    lib = attnc.Library(str(library))
    assert [k.id for k in lib.kernels] == [kernel_id], [k.id for k in lib.kernels]
    kernel = lib[kernel_id]
    rng = np.random.default_rng(35)
    # Sq = Sk = 37, then a chunk of 5 queries against 37 keys (bottom-right alignment); batch 2.
    for seq_q, seq_k in ((37, 37), (5, 37)):
        q = rng.standard_normal((2, seq_q, HEADS, HEAD_DIM), dtype=np.float32)
        k = rng.standard_normal((2, seq_k, KV_HEADS, HEAD_DIM), dtype=np.float32)
        v = rng.standard_normal((2, seq_k, KV_HEADS, HEAD_DIM), dtype=np.float32)
        out = kernel.run(q=q, k=k, v=v)["out"]
        assert out.shape == (2, seq_q, HEADS, HEAD_DIM) and out.dtype == np.float32, (out.shape, out.dtype)
        want = reference(q, k, v)
        error = float(np.abs(out - want).max())
        # An fp32 kernel against fp64: a few ulps of values of size ~1; 1e-4 leaves a margin of ~50x.
        assert np.isfinite(out).all() and error < 1e-4, f"Sq={seq_q} Sk={seq_k}: max abs error {error:.3g}"
        # The check can tell: a kernel that dropped the mask would be far off.
        assert float(np.abs(out - reference(q, k, v, causal=False)).max()) > 1e-2, "the causal mask made no difference"
        print(f"wheel_check: {kernel_id} B=2 Sq={seq_q} Sk={seq_k}: max abs error vs fp64 {error:.2e} "
              f"(variant {kernel.selected_target})")
    print(f"wheel_check: binding {package}, runtime {runtime.name} beside it")


main()
