"""variant_isa_test.py: no x86 kernel variant uses an instruction outside the CPU features it requires.

Disassembles every generated kernel library under a build tree (each variant is its own archive
member, `<library>_<kernel id>[_<pipeline>]_v<N>.a.o`) and the Halide runtimes, classifies each
instruction (x86_isa.py), and fails on any that needs an extension its variant's
required_cpu_features (the manifest's, which the runtime checks with cpuid) does not list: the
class of the Zen 4 variant's SSE4a `insertq` that crashed Intel CPUs. The runtimes must run on
the least capable variant's CPU: a library's own runtime is held to that variant's features, the
build's shared runtime (attnc_halide_runtime) to none beyond x86-64.

usage: variant_isa_test.py BUILD_DIR
"""
import collections
import concurrent.futures
import json
import os
import re
import subprocess
import sys

import x86_isa

MEMBER = re.compile(r"^(\S+\.o):\s+file format (\S+)")
FUNCTION = re.compile(r"^[0-9a-f]+ <(.+)>:$")
INSTRUCTION = re.compile(r"^\s+[0-9a-f]+:\t(.*)$")
VARIANT = re.compile(r"_v(\d+)\.a\.o$")
SKIPPED_TREES = re.compile(r"(^|/)(sanitize[^/]*|consumer[^/]*|CMakeFiles)(/|$)")


def self_check():
    """The classifier must see what this test exists to catch."""
    cases = {
        "insertq $0x8,$0x10,%xmm1,%xmm0": {"sse4a"},
        "vdpbf16ps %zmm0,%zmm1,%zmm2": {"avx512bf16", "avx512f"},
        "tdpbf16ps %tmm1,%tmm2,%tmm0": {"amx-bf16"},
        "vfmadd231ps %ymm1,%ymm2,%ymm3": {"fma", "avx"},
        "vpaddd %ymm0,%ymm1,%ymm2": {"avx2", "avx"},
        "shlx %eax,%ebx,%ecx": {"bmi2"},
        "vaddph %zmm1,%zmm2,%zmm3": {"avx512fp16", "avx512f"},
        "vcvtps2ph $0x4,%ymm0,%xmm1": {"f16c", "avx"},
        "pshufb %xmm0,%xmm1": {"ssse3"},
        "addps %xmm0,%xmm1": set(),
    }
    for text, expected in cases.items():
        got = x86_isa.features(text)
        if got != expected:
            sys.exit(f"x86_isa.features('{text}') is {sorted(got)}, expected {sorted(expected)}")


def libraries(build):
    """(archive, {kernel id: [(variant target, required features)]}) for each x86 kernel library."""
    found = []
    for root, dirs, files in os.walk(build):
        dirs[:] = [d for d in dirs if not SKIPPED_TREES.search(os.path.join(root, d)[len(build):])]
        for name in files:
            if not name.endswith(".json"):
                continue
            archive = os.path.join(root, name[: -len(".json")] + ".a")
            if not os.path.exists(archive):
                continue
            try:
                with open(os.path.join(root, name)) as f:
                    manifest = json.load(f)
            except (OSError, ValueError):
                continue
            if not isinstance(manifest, dict) or "kernels" not in manifest or "library" not in manifest:
                continue
            kernels = {}
            for k in manifest["kernels"]:
                variants = k.get("variants") or [{"target": k["target"], "required_cpu_features": k["required_cpu_features"]}]
                kernels[k["id"]] = [(v["target"], v["required_cpu_features"]) for v in variants]
            if any(t.startswith("x86-64") for vs in kernels.values() for t, _ in vs):
                least = manifest["kernels"][0].get("required_cpu_features", "") if manifest["kernels"] else ""
                found.append((archive, manifest["library"], kernels))
                runtime = os.path.join(root, name[: -len(".json")] + "_runtime.a")
                if os.path.exists(runtime):
                    found_runtimes.append((runtime, ("halide runtime of " + manifest["library"], least)))
    return found


def shared_runtimes(build):
    """The build's own Halide runtimes (cmake/AttncKernels.cmake): the x86-64 baseline's."""
    out = []
    for root, dirs, files in os.walk(build):
        dirs[:] = [d for d in dirs if not SKIPPED_TREES.search(os.path.join(root, d)[len(build):])]
        out += [(os.path.join(root, n), ("halide runtime (x86-64 baseline)", "")) for n in files
                if n.startswith("attnc_halide_runtime") and n.endswith(".a")]
    return out


found_runtimes = []


def member_requirements(member, library, kernels):
    """(target, required features) of one archive member, or None where it is not x86 code of ours."""
    match = VARIANT.search(member)
    if match is None:
        return None
    stem = member[len(library) + 1:] if member.startswith(library + "_") else member
    owners = [k for k in kernels if stem.startswith(k + "_")]
    if not owners:
        return None
    variants = kernels[max(owners, key=len)]
    index = int(match.group(1))
    return variants[index] if index < len(variants) else None


def scan(archive, requirements_of):
    """Counts and violations of one archive: requirements_of(member) gives (target, features) or None."""
    run = subprocess.run(["objdump", "-d", "--no-show-raw-insn", archive], capture_output=True, text=True)
    if run.returncode != 0:
        if not os.path.exists(archive):  # a CLI test's work folder, removed while this ran
            return 0, {}
        sys.exit(f"objdump -d {archive} failed: {run.stderr.strip()}")
    text = run.stdout
    violations = collections.defaultdict(list)  # (target, missing) -> [example]
    instructions = 0
    current = None
    function = "?"
    for line in text.splitlines():
        m = MEMBER.match(line)
        if m:
            current = requirements_of(m.group(1)) if "x86-64" in m.group(2) else None
            member = m.group(1)
            if current is not None:
                target, required = current
                allowed = set(required.split(",")) if required else set()
            continue
        if current is None:
            continue
        m = FUNCTION.match(line)
        if m:
            function = m.group(1)
            continue
        m = INSTRUCTION.match(line)
        if not m:
            continue
        instructions += 1
        missing = x86_isa.features(m.group(1)) - allowed
        if missing:
            key = (target, ",".join(sorted(missing)))
            if len(violations[key]) < 3:
                violations[key].append(f"{os.path.basename(archive)}({member}) {function}: {m.group(1).strip()}")
            else:
                violations[key].append(None)
    return instructions, violations


def main():
    self_check()
    build = os.path.abspath(sys.argv[1])
    libs = libraries(build)
    runtime_archives = found_runtimes + shared_runtimes(build)
    if not libs:
        print(f"skipped: no x86 kernel library (a .a beside its manifest) under {build}")
        return 77
    jobs = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for archive, library, kernels in libs:
            jobs.append(pool.submit(scan, archive, lambda m, l=library, k=kernels: member_requirements(m, l, k)))
        for archive, requirement in runtime_archives:
            jobs.append(pool.submit(scan, archive, lambda m, r=requirement: r))
        total = 0
        failures = collections.defaultdict(list)
        for job in jobs:
            count, violations = job.result()
            total += count
            for key, examples in violations.items():
                failures[key] += examples
    print(f"{len(libs)} kernel libraries and {len(runtime_archives)} Halide runtimes, {total} instructions")
    for (target, missing), examples in sorted(failures.items()):
        print(f"FAIL {len(examples)} instruction(s) of variant {target} need {missing}, which it does not require:")
        for e in [e for e in examples if e][:3]:
            print(f"    {e}")
    if not failures and total == 0:
        sys.exit("no instruction was read")
    print(f"{0 if failures else 1} passed, {1 if failures else 0} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
