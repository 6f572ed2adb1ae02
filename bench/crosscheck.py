"""Cross-checks any spec end to end: attnc gen --shared, attn-run on random .npy inputs, and an
independent NumPy fp64 implementation of the contract (docs/DSL.md). Optional tool (needs NumPy).

Usage: crosscheck.py BUILD_DIR "SPEC TEXT" B SQ SK [--target T] [--attn-run PATH] [--emulator CMD]
(block form: SQ is S, SK ignored). For another architecture, e.g. AArch64 from x86 (make arm):
  --target arm64 --attn-run build-arm/tools/attn-run --emulator "qemu-aarch64 -L /usr/aarch64-linux-gnu"
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np


def parse(spec_text):
    return dict(item.split("=", 1) for item in spec_text.split())


def bf16_bits(a):
    """float32 -> bf16 bit patterns ('<u2'), to nearest even as attn-run and the kernels round."""
    b = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_value(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def stored(a, dtype):
    """a as a kernel of this storage dtype sees it (attn-run rounds '<f4' inputs the same way)."""
    if dtype == "f16":
        return a.astype(np.float16).astype(np.float32)
    return bf16_value(bf16_bits(a)) if dtype == "bf16" else a


def random_key_block(seed, qb, n, key_blocks):
    """The random(BS,N,SEED) draw of docs/DSL.md, in uint32 arithmetic."""
    m = 0xFFFFFFFF
    h = (seed * 0x9E3779B1 + qb * 0x85EBCA77 + n * 0xC2B2AE3D) & m
    h ^= h >> 15
    h = (h * 0x2C1B3C6D) & m
    h ^= h >> 12
    h = (h * 0x297A2D39) & m
    h ^= h >> 15
    return h % max(key_blocks, 1)


def keep_matrix(mask, mask_block, sq, sk, h, inputs):
    """Kept pairs as a [B,H,Sq,Sk] bool array: bottom-right aligned, & before |, parentheses."""
    b = inputs["batch"]
    lk = inputs["key_lengths"] if "padding" in mask else np.full(b, sk)
    qp = np.arange(sq)[None, None, :, None] + lk[:, None, None, None] - sq  # [B,1,Sq,1]
    k = np.arange(sk)[None, None, None, :]
    tokens = re.findall(r"window\(-?\d+,-?\d+\)|global\(\d+\)|random\(\d+,\d+,\d+\)|causal|none|padding|"
                        r"prefix|document|tensor|[&|()]", mask)
    full = np.ones((b, h, sq, sk), bool)
    pos = 0

    def blocks():
        if mask_block <= 0:
            return qp, qp, k, k
        qb, kb = np.floor_divide(qp, mask_block), k // mask_block
        return qb * mask_block, qb * mask_block + mask_block - 1, kb * mask_block, kb * mask_block + mask_block - 1

    def term():
        nonlocal pos
        tok = tokens[pos]
        pos += 1
        if tok == "(":
            value = union()
            pos += 1
            return value
        q_lo, q_hi, k_lo, k_hi = blocks()
        if tok == "none":
            return full.copy()
        if tok in ("causal",) or tok.startswith("window"):
            left, right = (-1, 0) if tok == "causal" else map(int, tok[7:-1].split(","))
            keep = full.copy()
            if left >= 0:
                keep &= k_hi >= q_lo - left
            if right >= 0:
                keep &= k_lo <= q_hi + right
            return keep
        if tok.startswith("global"):
            g = int(tok[7:-1])
            return full & ((k_lo < g) | (q_lo < g))
        if tok.startswith("random"):
            bs, n, seed = map(int, tok[7:-1].split(","))
            keep = np.zeros((b, h, sq, sk), bool)
            for bi in range(b):
                nkb = (lk[bi] + bs - 1) // bs
                for i in range(sq):
                    q = i + lk[bi] - sq
                    if q < 0:
                        continue
                    for draw in range(n):
                        kb = random_key_block(seed, q // bs, draw, nkb)
                        keep[bi, :, i, :] |= (np.arange(sk) // bs) == kb
            return keep
        if tok == "padding":
            return full & (k < inputs["key_lengths"][:, None, None, None])
        if tok == "prefix":
            return full & (k < inputs["prefix_lengths"][:, None, None, None])
        if tok == "document":
            return full & (inputs["segment_ids_q"][:, None, :, None] == inputs["segment_ids_k"][:, None, None, :])
        if tok == "tensor":
            return full & (inputs["mask"] != 0)
        raise ValueError(tok)

    def both():
        nonlocal pos
        value = term()
        while pos < len(tokens) and tokens[pos] == "&":
            pos += 1
            value = value & term()
        return value

    def union():
        nonlocal pos
        value = both()
        while pos < len(tokens) and tokens[pos] == "|":
            pos += 1
            value = value | both()
        return value

    return union(), qp


def core(q, k, v, scale, keep, qp, spec, x):
    """Returns (out [B,Sq,H,Dv], lse [B,Sq,H])."""
    h, kvh = q.shape[2], k.shape[2]
    k = np.repeat(k, h // kvh, axis=2)
    v = np.repeat(v, h // kvh, axis=2)
    s = np.einsum("bqhd,bkhd->bhqk", q, k) * scale
    if spec.get("softcap", "none") != "none":
        cap = float(spec["softcap"])
        s = cap * np.tanh(s / cap)
    if spec.get("alibi") == "true":
        distance = np.abs(qp - np.arange(k.shape[1])[None, None, None, :])
        s = s - x["alibi_slopes"][None, :, None, None] * distance
    if spec.get("score_bias") == "tensor":
        s = s + x["score_bias"]
    s = np.where(keep, s, -np.inf)
    m = s.max(-1, keepdims=True)
    p = np.where(keep, np.exp(s - np.where(np.isfinite(m), m, 0)), 0)
    l = p.sum(-1, keepdims=True)
    out = np.einsum("bhqk,bkhd->bqhd", np.divide(p, l, out=np.zeros_like(p), where=l > 0), v)
    with np.errstate(divide="ignore"):
        lse = np.where(l[..., 0] > 0, m[..., 0] + np.log(np.where(l[..., 0] > 0, l[..., 0], 1)), -np.inf)
    return out, lse.transpose(0, 2, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("spec")
    ap.add_argument("b", type=int)
    ap.add_argument("sq", type=int)
    ap.add_argument("sk", type=int)
    ap.add_argument("--target", default="host")
    ap.add_argument("--attn-run", help="the attn-run to run the library with (default BUILD/tools/attn-run)")
    ap.add_argument("--emulator", default="", help="a command that runs attn-run (qemu-aarch64 ...)")
    a = ap.parse_args()
    attnc = os.path.join(a.build, "tools", "attnc")
    resolved = subprocess.check_output([attnc, "check", "--spec", a.spec], text=True).splitlines()
    spec, kid = parse(resolved[0]), resolved[1].split(": ")[1]
    h, kvh, d, dv = (int(spec[x]) for x in ("heads", "kv_heads", "head_dim", "head_dim_v"))
    m, scale, mask = int(spec["d_model"]), float(spec["scale"]), spec["mask"]
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.check_output([attnc, "gen", "--spec", a.spec, "--target", a.target, "-o", tmp, "--shared",
                                 "--basename", "crosscheck"])
        if spec["form"] == "core":
            shapes = {"q": (a.b, a.sq, h, d), "k": (a.b, a.sk, kvh, d), "v": (a.b, a.sk, kvh, dv)}
        else:
            rows = {"w_q": h * d, "w_k": kvh * d, "w_v": kvh * dv}
            shapes = {"x": (a.b, a.sq, m)}
            if spec["qkv"] == "fused":
                shapes["w_qkv"] = (sum(rows.values()), m)
            else:
                shapes.update({w: (r, m) for w, r in rows.items()})
            if spec["proj_bias"] == "true":
                names = ["b_qkv"] if spec["qkv"] == "fused" else ["b_q", "b_k", "b_v"]
                for n in names:
                    shapes[n] = (shapes["w" + n[1:]][0],)
            shapes["w_o"] = (m, h * dv)
            if spec["proj_bias"] == "true":
                shapes["b_o"] = (m,)
        arrays = {n: rng.uniform(-1, 1, s).astype(np.float32) for n, s in shapes.items()}
        sq, sk = (a.sq, a.sk) if spec["form"] == "core" else (a.sq, a.sq)
        if "padding" in mask:
            arrays["key_lengths"] = rng.integers(0, sk + 1, a.b).astype(np.int32)
            arrays["key_lengths"][0] = sk
        if "prefix" in mask:
            arrays["prefix_lengths"] = rng.integers(0, sk + 1, a.b).astype(np.int32)
        if "document" in mask:
            arrays["segment_ids_q"] = np.sort(rng.integers(0, 3, (a.b, sq)), axis=1).astype(np.int32)
            arrays["segment_ids_k"] = np.sort(rng.integers(0, 3, (a.b, sk)), axis=1).astype(np.int32)
        if "tensor" in mask:
            arrays["mask"] = (rng.uniform(0, 1, (a.b, h, sq, sk)) < 0.7).astype(np.uint8)
        if spec.get("alibi") == "true":
            arrays["alibi_slopes"] = (2.0 ** -np.arange(1, h + 1)).astype(np.float32)
        if spec.get("score_bias") == "tensor":
            arrays["score_bias"] = rng.uniform(-2, 2, (1, h, sq, sk)).astype(np.float32)
        attn_run = a.attn_run or os.path.join(a.build, "tools", "attn-run")
        cmd = a.emulator.split() + [attn_run, os.path.join(tmp, "crosscheck.so"), "--kernel", kid]
        for n, arr in arrays.items():
            np.save(os.path.join(tmp, n + ".npy"), arr)
            cmd += ["--input", f"{n}={os.path.join(tmp, n + '.npy')}"]
        cmd += ["--output", f"out={os.path.join(tmp, 'out.npy')}"]
        with_lse = spec.get("lse") == "true"
        if with_lse:
            cmd += ["--output", f"lse={os.path.join(tmp, 'lse.npy')}"]
        subprocess.check_call(cmd)
        out = np.load(os.path.join(tmp, "out.npy"))
        lse_out = np.load(os.path.join(tmp, "lse.npy")) if with_lse else None
    # f16/bf16 kernels: the '<f4' files were rounded by attn-run, so the reference takes the same
    # rounded values; out comes back as '<f2' or as bf16 bit patterns ('<u2').
    dtype = spec.get("dtype", "f32")
    out = bf16_value(out) if dtype == "bf16" else out.astype(np.float32)
    arrays.update({n: stored(arrays[n], dtype) for n in shapes})
    x = {n: arr.astype(np.float64) if arr.dtype == np.float32 else arr for n, arr in arrays.items()}
    x["batch"] = a.b
    mask_block = int(spec.get("mask_block", "0"))
    if spec["form"] == "core":
        keep, qp = keep_matrix(mask, mask_block, a.sq, a.sk, h, x)
        ref, ref_lse = core(x["q"], x["k"], x["v"], scale, keep, qp, spec, x)
    else:
        def lin(inp, w, b):
            return inp @ x[w].T + (x[b] if b in x else 0)
        if spec["qkv"] == "fused":
            qkv = lin(x["x"], "w_qkv", "b_qkv")
            q, k, v = np.split(qkv, [h * d, h * d + kvh * d], axis=-1)
        else:
            q, k, v = lin(x["x"], "w_q", "b_q"), lin(x["x"], "w_k", "b_k"), lin(x["x"], "w_v", "b_v")
        s = a.sq
        keep, qp = keep_matrix(mask, mask_block, s, s, h, x)
        o, ref_lse = core(q.reshape(a.b, s, h, d), k.reshape(a.b, s, kvh, d), v.reshape(a.b, s, kvh, dv), scale,
                          keep, qp, spec, x)
        ref = lin(o.reshape(a.b, s, h * dv), "w_o", "b_o")
    err = np.abs(out - ref).max()
    # A 16-bit out adds its own rounding, half a unit in the last place: 2^-8 (bf16), 2^-11 (f16).
    rounding = {"bf16": 2.0 ** -8, "f16": 2.0 ** -11}.get(dtype, 0.0)
    ok = np.isfinite(out).all() and err < (1e-4 + rounding) * max(1.0, np.abs(ref).max())
    if lse_out is not None:
        same_inf = np.array_equal(np.isneginf(lse_out), np.isneginf(ref_lse))
        finite = np.isfinite(ref_lse)
        lse_err = np.abs(lse_out[finite] - ref_lse[finite]).max() if finite.any() else 0.0
        print(f"lse: -inf rows match {same_inf}, max |lse - fp64| = {lse_err:.3g}")
        ok = ok and same_inf and lse_err < 1e-4 * max(1.0, np.abs(ref_lse[finite]).max() if finite.any() else 1)
    print(f"{kid} B={a.b} Sq={a.sq} Sk={a.sk}: max |out - fp64| = {err:.3g} {'ok' if ok else 'MISMATCH'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
