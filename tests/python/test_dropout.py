"""The issue's training kernels end to end from Python and attn-run: the spec "heads=4 head_dim=64
mask=causal dropout=0.1" forward (lse=true) through the binding, then its backward=true kernel
through attn-run on .npy files (seed and offset as uint64 arrays), both against an fp64 NumPy
reference with its own vectorized Philox 4x32-10 (docs/DSL.md's keep rule).
Usage: test_dropout.py LIBRARY.so ATTN_RUN (the runtime from $ATTNC_RUNTIME)."""
import os
import subprocess
import sys
import tempfile

import numpy as np

FORWARD = "attn_core_h4_kv4_d64_f32_causal_lse_drop3dcccccd"
BACKWARD = "attn_core_h4_kv4_d64_f32_causal_bwd_drop3dcccccd"
P = np.float32(0.1)
MASK32 = np.uint64(0xFFFFFFFF)


def philox(c0, c1, c2, c3, k0, k1):
    """Philox 4x32-10 on arrays of uint64 holding 32-bit words."""
    c = [np.asarray(x, dtype=np.uint64) for x in (c0, c1, c2, c3)]
    k = [np.uint64(k0), np.uint64(k1)]
    for r in range(10):
        if r:
            k = [(k[0] + np.uint64(0x9E3779B9)) & MASK32, (k[1] + np.uint64(0xBB67AE85)) & MASK32]
        p0 = np.uint64(0xD2511F53) * c[0]
        p1 = np.uint64(0xCD9E8D57) * c[2]
        c = [((p1 >> np.uint64(32)) ^ c[1] ^ k[0]) & MASK32, p1 & MASK32, ((p0 >> np.uint64(32)) ^ c[3] ^ k[1]) & MASK32,
             p0 & MASK32]
    return c


def keep_factor(batch, heads, seq_q, seq_k, seed, offset, p):
    """Z [B,H,Sq,Sk]: 1 / (1 - p) (float32) where kept, 0 where dropped."""
    b, h, i, j = np.meshgrid(np.arange(batch), np.arange(heads), np.arange(seq_q), np.arange(seq_k), indexing="ij")
    head = (b.astype(object) * heads + h + offset) % (1 << 64)  # 64-bit sum, exact
    lo = np.array(head % (1 << 32), dtype=np.uint64)
    hi = np.array(head >> 32, dtype=np.uint64)
    words = philox(j // 8, i, lo, hi, seed & 0xFFFFFFFF, seed >> 32)
    w = np.choose((j // 2) % 4, words)
    bits = (w >> (16 * (j % 2)).astype(np.uint64)) & np.uint64(0xFFFF)
    kept = bits >= np.uint64(int(np.floor(float(p) * 65536 + 0.5)))
    return np.where(kept, np.float64(np.float32(1) / (np.float32(1) - p)), 0.0)


def reference(q, k, v, dout, z):
    """out and dq, dk, dv in float64 (causal, bottom-right; one KV head per query head)."""
    q, k, v, dout = (x.astype(np.float64) for x in (q, k, v, dout))
    seq_q, seq_k, scale = q.shape[1], k.shape[1], 1 / np.sqrt(q.shape[3])
    s = np.einsum("bihd,bjhd->bhij", q, k) * scale
    keep = np.arange(seq_k)[None, :] <= np.arange(seq_q)[:, None] + seq_k - seq_q
    s = np.where(keep, s, -np.inf)
    probs = np.exp(s - s.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    out = np.einsum("bhij,bjhd->bihd", probs * z, v)
    dp = np.einsum("bihd,bjhd->bhij", dout, v) * z
    ds = probs * (dp - (probs * dp).sum(-1, keepdims=True))
    return out, {"dq": np.einsum("bhij,bjhd->bihd", ds, k) * scale, "dk": np.einsum("bhij,bihd->bjhd", ds, q) * scale,
                 "dv": np.einsum("bhij,bihd->bjhd", probs * z, dout)}


def close(got, want, what):
    err = np.abs(got - want).max()
    assert err < 2e-5 * max(1.0, np.abs(want).max()), f"{what}: max error {err}"
    print(f"{what}: max error {err:.2e}")


def main():
    import attnc  # here, so that bench/dropout_paired.py can take keep_factor without the binding

    library, attn_run = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(3)
    batch, seq_q, seq_k = 2, 37, 45
    q = rng.standard_normal((batch, seq_q, 4, 64)).astype(np.float32)
    k = rng.standard_normal((batch, seq_k, 4, 64)).astype(np.float32)
    v = rng.standard_normal((batch, seq_k, 4, 64)).astype(np.float32)
    dout = rng.standard_normal((batch, seq_q, 4, 64)).astype(np.float32)
    seed, offset = 0x0123456789ABCDEF, (1 << 64) - 3  # b * H + h + offset wraps
    z = keep_factor(batch, 4, seq_q, seq_k, seed, offset, P)
    kept = (z > 0).mean()
    assert abs(kept - 0.9) < 0.02, kept
    want_out, want_grads = reference(q, k, v, dout, z)

    lib = attnc.Library(library)
    forward = lib.kernel(FORWARD)
    result = forward(q=q, k=k, v=v, seed=np.array(seed, dtype=np.uint64), offset=np.array([offset], dtype=np.uint64))
    close(result["out"], want_out, "forward out (binding)")

    with tempfile.TemporaryDirectory() as work:
        files = {"q": q, "k": k, "v": v, "dout": dout, "out": result["out"], "lse": result["lse"],
                 "seed": np.array(seed, dtype=np.uint64), "offset": np.array(offset, dtype=np.uint64)}
        command = [attn_run, library, "--kernel", BACKWARD]
        for name, array in files.items():
            path = os.path.join(work, name + ".npy")
            np.save(path, array)
            command += ["--input", f"{name}={path}"]
        for name in ("dq", "dk", "dv"):
            command += ["--output", f"{name}={os.path.join(work, name + '.npy')}"]
        subprocess.run(command, check=True)
        for name in ("dq", "dk", "dv"):
            close(np.load(os.path.join(work, name + ".npy")), want_grads[name], f"backward {name} (attn-run)")
    # Another seed is another mask: the gradients move.
    other = forward(q=q, k=k, v=v, seed=np.array(seed + 1, dtype=np.uint64), offset=np.array(offset, dtype=np.uint64))
    assert np.abs(other["out"] - result["out"]).max() > 1e-2
    print("ok")


if __name__ == "__main__":
    main()
