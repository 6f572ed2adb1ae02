"""The implementations a workload is timed with: attnc through attn-run, and each peer in its own process.

Every run returns the JSON its process printed ({"median_ms": ...}), or {"error": ...} when the
process failed, or {"skipped": ...}. Peers take q, k, v; the driver composes the block form.
"""
import json
import os
import subprocess
import sys

import kernels
from limits import BENCH_DIR, compile_helper

ONEDNN_HEADER = "/usr/include/oneapi/dnnl/dnnl.hpp"


def run_process(command, env):
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        return {"error": (result.stderr.strip() or result.stdout.strip())[-2000:]}
    return json.loads(result.stdout.strip().splitlines()[-1])


class Attnc:
    """attnc kernels from one generated library, timed by attn-run --bench."""
    name, optional = "attnc", False

    def __init__(self, build, library, threads, env):
        self.build, self.library, self.threads, self.env = build, library, threads, env
        self.ids = {}

    def command(self, workload, data_dir, out_path, warmup, runs):
        if workload.spec not in self.ids:
            self.ids[workload.spec] = kernels.kernel_id(self.build, workload.spec)
        names = ("x", "w_qkv", "b_qkv", "w_o", "b_o") if workload.block else ("q", "k", "v")
        command = [os.path.join(self.build, "tools", "attn-run"), self.library, "--kernel", self.ids[workload.spec],
                   "--threads", str(self.threads)]
        for name in names:
            command += ["--input", f"{name}={os.path.join(data_dir, name + '.npy')}"]
        return command + ["--output", f"out={out_path}", "--bench", "--json", "--warmup", str(warmup),
                          "--runs", str(runs)]

    def run(self, workload, data_dir, out_path, warmup, runs):
        return run_process(self.command(workload, data_dir, out_path, warmup, runs), self.env)


class AttncAvx2(Attnc):
    """The same library capped at its AVX2 variant (attn-run --max-isa avx2), on an AVX-512 machine,
    for the workloads in MEASURED; its ratio is its time over attnc's (the AVX-512 variant's)."""
    name, optional = "attnc-avx2", True
    MEASURED = ("W1", "W3", "W4")

    def command(self, workload, data_dir, out_path, warmup, runs):
        return super().command(workload, data_dir, out_path, warmup, runs) + ["--max-isa", "avx2"]

    def run(self, workload, data_dir, out_path, warmup, runs):
        if workload.name not in self.MEASURED:
            return {"skipped": "the AVX2 variant is timed on " + ", ".join(self.MEASURED) + " only"}
        return super().run(workload, data_dir, out_path, warmup, runs)


def attnc_variants(build, library, threads, env, machine):
    """attnc, and attnc capped at AVX2 where the machine has AVX-512; {name: why skipped}."""
    attnc = Attnc(build, library, threads, env)
    if machine.get("avx512f"):
        return [attnc, AttncAvx2(build, library, threads, env)], {}
    return [attnc], {"attnc-avx2": "this CPU has no AVX-512: attnc's own rows are its AVX2 variant"}


class ProcessPeer:
    """A peer program called as PEER IN_DIR OUT.npy MASK THREADS WARMUP RUNS (see peer_common.py)."""

    def __init__(self, name, command, threads, env, optional=True):
        self.name, self.command, self.threads, self.env, self.optional = name, command, threads, env, optional

    def run(self, workload, data_dir, out_path, warmup, runs):
        return run_process(self.command + [data_dir, out_path, workload.mask, str(self.threads), str(warmup),
                                           str(runs)], self.env)


def importable(modules):
    """None when every module imports in the bench's Python, else the first missing one."""
    for module in modules:
        if subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode != 0:
            return module
    return None


def peers(out_dir, threads, env):
    """(the peers that can run here, {peer name: why it is skipped})."""
    python = [sys.executable]
    available = [ProcessPeer("numpy-unfused", python + [os.path.join(BENCH_DIR, "unfused_peer.py")], threads, env,
                             optional=False)]
    skipped = {}
    if not os.path.exists(ONEDNN_HEADER):
        skipped["onednn"] = "libdnnl-dev not installed"
    else:
        try:
            binary = compile_helper("onednn_peer.cpp", os.path.join(out_dir, "onednn_peer"), ["-fopenmp", "-ldnnl"])
            available.append(ProcessPeer("onednn", [binary], threads, env))
        except subprocess.CalledProcessError as e:
            skipped["onednn"] = f"onednn_peer.cpp did not build ({e})"
    for name, script, modules in (("torch-sdpa", "torch_peer.py", ["torch"]),
                                  ("onnxruntime-mha", "ort_peer.py", ["onnxruntime", "onnx"])):
        missing = importable(modules)
        if missing:
            skipped[name] = f"{missing} not installed"
        else:
            available.append(ProcessPeer(name, python + [os.path.join(BENCH_DIR, script)], threads, env))
    return available, skipped
