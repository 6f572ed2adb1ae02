"""Cross-checks any spec end to end: attnc gen --shared, attn-run on random .npy inputs, and an
independent NumPy fp64 implementation of the contract (docs/DSL.md). Optional tool (needs NumPy).

Usage: crosscheck.py BUILD_DIR "SPEC TEXT" B SQ SK [--target T]   (block form: SQ is S, SK ignored)
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


def keep_matrix(mask, sq, sk):
    """Kept (query, key) pairs: bottom-right aligned positions, & before |, parentheses."""
    qp = np.arange(sq)[:, None] + sk - sq
    k = np.arange(sk)[None, :]
    tokens = re.findall(r"window\(-?\d+,-?\d+\)|causal|none|[&|()]", mask)
    pos = 0

    def term():
        nonlocal pos
        tok = tokens[pos]
        pos += 1
        if tok == "(":
            value = union()
            pos += 1
            return value
        if tok == "none":
            return np.ones((sq, sk), bool)
        left, right = (-1, 0) if tok == "causal" else map(int, tok[7:-1].split(","))
        keep = np.ones((sq, sk), bool)
        if left >= 0:
            keep &= k >= qp - left
        if right >= 0:
            keep &= k <= qp + right
        return keep

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

    return union()


def core(q, k, v, scale, keep):
    h, kvh = q.shape[2], k.shape[2]
    k = np.repeat(k, h // kvh, axis=2)
    v = np.repeat(v, h // kvh, axis=2)
    s = np.einsum("bqhd,bkhd->bhqk", q, k) * scale
    s = np.where(keep, s, -np.inf)
    m = s.max(-1, keepdims=True)
    p = np.where(keep, np.exp(s - np.where(np.isfinite(m), m, 0)), 0)
    l = p.sum(-1, keepdims=True)
    return np.einsum("bhqk,bkhd->bqhd", np.divide(p, l, out=np.zeros_like(p), where=l > 0), v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("spec")
    ap.add_argument("b", type=int)
    ap.add_argument("sq", type=int)
    ap.add_argument("sk", type=int)
    ap.add_argument("--target", default="host")
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
        cmd = [os.path.join(a.build, "tools", "attn-run"), os.path.join(tmp, "crosscheck.so"), "--kernel", kid]
        for n, arr in arrays.items():
            np.save(os.path.join(tmp, n + ".npy"), arr)
            cmd += ["--input", f"{n}={os.path.join(tmp, n + '.npy')}"]
        cmd += ["--output", f"out={os.path.join(tmp, 'out.npy')}"]
        subprocess.check_call(cmd)
        out = np.load(os.path.join(tmp, "out.npy"))
    x = {n: arr.astype(np.float64) for n, arr in arrays.items()}
    if spec["form"] == "core":
        ref = core(x["q"], x["k"], x["v"], scale, keep_matrix(mask, a.sq, a.sk))
    else:
        def lin(inp, w, b):
            return inp @ x[w].T + (x[b] if b in x else 0)
        if spec["qkv"] == "fused":
            qkv = lin(x["x"], "w_qkv", "b_qkv")
            q, k, v = np.split(qkv, [h * d, h * d + kvh * d], axis=-1)
        else:
            q, k, v = lin(x["x"], "w_q", "b_q"), lin(x["x"], "w_k", "b_k"), lin(x["x"], "w_v", "b_v")
        s = a.sq
        o = core(q.reshape(a.b, s, h, d), k.reshape(a.b, s, kvh, d), v.reshape(a.b, s, kvh, dv), scale,
                 keep_matrix(mask, s, s))
        ref = lin(o.reshape(a.b, s, h * dv), "w_o", "b_o")
    err = np.abs(out - ref).max()
    ok = np.isfinite(out).all() and err < 1e-4 * max(1.0, np.abs(ref).max())
    print(f"{kid} B={a.b} Sq={a.sq} Sk={a.sk}: max |out - fp64| = {err:.3g} {'ok' if ok else 'MISMATCH'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
