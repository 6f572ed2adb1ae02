"""Generating the benchmark's attnc kernels: one `attnc gen` call for every spec, one shared library.

The library is reused while the attnc binary and the spec list are unchanged (a stamp file holds
their hash), so repeated runs do not pay the generation again.
"""
import hashlib
import os
import shutil
import subprocess
import sys
import time


def attnc_path(build):
    return os.path.join(build, "tools", "attnc")


def kernel_id(build, spec):
    return subprocess.run([attnc_path(build), "id", "--spec", spec], capture_output=True, text=True,
                          check=True).stdout.strip()


def gen(build, specs, out_dir, basename, target="host"):
    """Runs attnc gen --target TARGET --shared for specs; returns the seconds it took."""
    command = [attnc_path(build), "gen"]
    for spec in specs:
        command += ["--spec", spec]
    command += ["--target", target, "-o", out_dir, "--shared", "--basename", basename]
    start = time.perf_counter()
    # Halide warns once per function when it emulates (b)float16 arithmetic: a page for each bf16
    # spec. Shown whole only when generation fails; otherwise counted on one line.
    result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        sys.stderr.write(result.stderr)
        raise subprocess.CalledProcessError(result.returncode, command)
    warnings = [line for line in result.stderr.splitlines() if line.startswith("Warning")]
    if warnings:
        print(f"attnc gen: {len(warnings)} Halide warnings, the first: {warnings[0][:200]}", file=sys.stderr)
    return seconds


def generate(build, specs, out_dir, target="host"):
    """Returns (library path, generation seconds or None when the library was reused)."""
    digest = hashlib.sha256()
    if target != "host":  # the stamps of host libraries stay as they were
        digest.update(target.encode())
    with open(attnc_path(build), "rb") as binary:
        digest.update(binary.read())
    digest.update("\n".join(specs).encode())
    stamp_path = os.path.join(out_dir, "stamp")
    library = os.path.join(out_dir, "bench_kernels.so")
    if os.path.exists(library) and os.path.exists(stamp_path):
        with open(stamp_path) as stamp:
            if stamp.read() == digest.hexdigest():
                return library, None
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    seconds = gen(build, specs, out_dir, "bench_kernels", target)
    with open(stamp_path, "w") as stamp:
        stamp.write(digest.hexdigest())
    return library, seconds


def time_one_spec(build, spec, out_dir):
    """Seconds `attnc gen` takes for one spec and the x86 dispatch set, in a fresh folder."""
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    seconds = gen(build, [spec], out_dir, "one_spec")
    shutil.rmtree(out_dir, ignore_errors=True)
    return seconds
