"""The implementations a workload is timed with: attnc through attn-run, and each peer in its own process.

Every run returns the JSON its process printed ({"median_ms": ...}), or {"error": ...} when the
process failed, or {"skipped": ...}. Peers take q, k, v; the driver composes the block form.
storage(workload) names the type an implementation keeps its tensors in: its output is checked
with that type's tolerance, and a decode's bytes read are counted in it.

Low-precision workloads (bf16, f16) get their own set (lowp_implementations): attnc's kernel of
that dtype (named attnc, so every other row is compared with it), attnc's fp32 kernel on the same
rounded inputs, NumPy unfused in fp32, oneDNN in bf16 and ONNX Runtime in f16.
"""
import functools
import json
import os
import subprocess
import sys

import kernels
from limits import BENCH_DIR, compile_helper

ONEDNN_HEADER = "/usr/include/oneapi/dnnl/dnnl.hpp"
SWEEP_IMPLEMENTATIONS = ("attnc", "onednn-bf16")  # on the low-precision sweep


def run_process(command, env):
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        return {"error": (result.stderr.strip() or result.stdout.strip())[-2000:]}
    return json.loads(result.stdout.strip().splitlines()[-1])


class Attnc:
    """attnc kernels from one generated library, timed by attn-run --bench."""
    name, optional, runs_block = "attnc", False, True

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

    def storage(self, workload):
        return "f32"


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


class AttncF32(Attnc):
    """On a bf16 / f16 workload: attnc's fp32 kernel of the same spec, on the same rounded inputs;
    its ratio is its time over the low-precision kernel's."""
    name = "attnc-f32"

    def command(self, workload, data_dir, out_path, warmup, runs):
        return super().command(workload.in_f32(), data_dir, out_path, warmup, runs)


class AttncLowp:
    """attnc's bf16 / f16 kernels, timed by bench/lowp_run.cpp through the runtime's C ABI: attn-run
    reads no bf16 .npy yet. The driver converts the harness's rounded f32 inputs exactly."""
    name, optional, runs_block = "attnc", False, True

    def __init__(self, build, library, binary, threads, env):
        self.build, self.library, self.binary, self.threads, self.env = build, library, binary, threads, env
        self.ids = {}

    def run(self, workload, data_dir, out_path, warmup, runs):
        if workload.spec not in self.ids:
            self.ids[workload.spec] = kernels.kernel_id(self.build, workload.spec)
        return run_process([self.binary, self.library, self.ids[workload.spec], data_dir, out_path,
                            str(self.threads), str(warmup), str(runs)], self.env)

    def storage(self, workload):
        return workload.dtype


class ProcessPeer:
    """A peer program called as PEER IN_DIR OUT.npy MASK THREADS WARMUP RUNS [DTYPE] (see peer_common.py).
    dtype: the type it stores tensors in; any but f32 is passed as the last argument."""
    runs_block = False

    def __init__(self, name, command, threads, env, optional=True, dtype="f32"):
        self.name, self.command, self.threads, self.env, self.optional = name, command, threads, env, optional
        self.dtype = dtype

    def run(self, workload, data_dir, out_path, warmup, runs):
        extra = [] if self.dtype == "f32" else [self.dtype]
        return run_process(self.command + [data_dir, out_path, workload.mask, str(self.threads), str(warmup),
                                           str(runs)] + extra, self.env)

    def storage(self, workload):
        return self.dtype


def importable(modules):
    """None when every module imports in the bench's Python, else the first missing one."""
    for module in modules:
        if subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode != 0:
            return module
    return None


@functools.lru_cache(maxsize=None)
def onednn_binary(out_dir):
    """(the oneDNN peer's binary, None) or (None, why it is skipped); built once per run."""
    if not os.path.exists(ONEDNN_HEADER):
        return None, "libdnnl-dev not installed"
    try:
        return compile_helper("onednn_peer.cpp", os.path.join(out_dir, "onednn_peer"), ["-fopenmp", "-ldnnl"]), None
    except subprocess.CalledProcessError as e:
        return None, f"onednn_peer.cpp did not build ({e})"


def peers(out_dir, threads, env):
    """(the peers that can run here, {peer name: why it is skipped})."""
    python = [sys.executable]
    available = [ProcessPeer("numpy-unfused", python + [os.path.join(BENCH_DIR, "unfused_peer.py")], threads, env,
                             optional=False)]
    skipped = {}
    binary, why = onednn_binary(out_dir)
    if binary:
        available.append(ProcessPeer("onednn", [binary], threads, env))
    else:
        skipped["onednn"] = why
    for name, script, modules in (("torch-sdpa", "torch_peer.py", ["torch"]),
                                  ("onnxruntime-mha", "ort_peer.py", ["onnxruntime", "onnx"])):
        missing = importable(modules)
        if missing:
            skipped[name] = f"{missing} not installed"
        else:
            available.append(ProcessPeer(name, python + [os.path.join(BENCH_DIR, script)], threads, env))
    return available, skipped


def lowp_driver(build, out_dir):
    """Builds bench/lowp_run.cpp against BUILD's runtime library; returns the binary's path."""
    runtime = os.path.join(build, "runtime", "libattnc_runtime.a")
    if not os.path.exists(runtime):
        sys.exit(f"the bf16 / f16 rows need '{runtime}': build the attnc_runtime target (make bench does)")
    return compile_helper("lowp_run.cpp", os.path.join(out_dir, "lowp_run"),
                          ["-I", os.path.join(BENCH_DIR, "..", "runtime", "include"), runtime, "-ldl"])


def lowp_implementations(build, library, out_dir, threads, env):
    """The bf16 / f16 rows' implementations, {name: why skipped}, and per dtype which of them run."""
    python = [sys.executable]
    driver = lowp_driver(build, out_dir)
    numpy_peer = ProcessPeer("numpy-unfused", python + [os.path.join(BENCH_DIR, "unfused_peer.py")], threads, env,
                             optional=False)
    implementations = [AttncLowp(build, library, driver, threads, env), AttncF32(build, library, threads, env),
                       numpy_peer]
    runs_on = {"numpy-unfused": ("bf16", "f16")}
    skipped = {}
    binary, why = onednn_binary(out_dir)
    if binary:
        implementations.append(ProcessPeer("onednn-bf16", [binary], threads, env, dtype="bf16"))
        runs_on["onednn-bf16"] = ("bf16",)
    else:
        skipped["onednn-bf16"] = why
    missing = importable(["onnxruntime", "onnx"])
    if missing:
        skipped["onnxruntime-mha-f16"] = f"{missing} not installed"
    else:
        implementations.append(ProcessPeer("onnxruntime-mha-f16", python + [os.path.join(BENCH_DIR, "ort_peer.py")],
                                           threads, env, dtype="f16"))
        runs_on["onnxruntime-mha-f16"] = ("f16",)

    def for_workload(workload):
        """The bf16 sweep's points (for the plot) take attnc and oneDNN only."""
        chosen = [i for i in implementations if i.name not in runs_on or workload.dtype in runs_on[i.name]]
        return [i for i in chosen if i.name in SWEEP_IMPLEMENTATIONS] if workload.name == "sweep" else chosen
    return for_workload, skipped
