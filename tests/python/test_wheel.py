"""The Python wheel with no clone (issue 35): `make wheel`'s attnc-*.whl checked as a wheel (RECORD
hashes, metadata, tag), pip-installed into a fresh virtual environment, then from a folder outside
the repository, with PYTHONPATH and ATTNC_RUNTIME unset, `python -m attnc gen --shared` for a causal
GQA spec of odd sizes and the library run from NumPy through the installed binding (wheel_check.py,
against its own fp64 NumPy attention). Exit 77 (skipped) only when pip can reach no package index and
no halide wheel lies in PIP_FIND_LINKS. Usage: test_wheel.py WHEEL_DIR WORK_DIR"""
import base64
import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile

REPO = pathlib.Path(__file__).resolve().parents[2]
SPEC = "heads=4 kv_heads=2 head_dim=24 mask=causal"
KERNEL_ID = "attn_core_h4_kv2_d24_f32_causal"
SKIP = 77


def check_wheel_file(wheel):
    """The zip is a wheel pip's rules accept: every file in RECORD with its sha256 and size."""
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        dist_info = next(n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info"))
        for needed in ("METADATA", "WHEEL", "RECORD", "entry_points.txt"):
            assert f"{dist_info}/{needed}" in names, f"{wheel.name} lacks {dist_info}/{needed}"
        for needed in ("attnc/__init__.py", "attnc/__main__.py", "attnc/libattnc_runtime.so", "attnc/bin/attnc"):
            assert needed in names, f"{wheel.name} lacks {needed}"
        assert z.getinfo("attnc/bin/attnc").external_attr >> 16 & 0o111, "attnc/bin/attnc is not executable"
        recorded = set()
        for line in z.read(f"{dist_info}/RECORD").decode().splitlines():
            name, digest, size = line.rsplit(",", 2)
            recorded.add(name)
            if name.endswith("/RECORD"):
                continue
            data = z.read(name)
            want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert digest == want and int(size) == len(data), f"RECORD is wrong for {name}"
        assert recorded == names, f"RECORD and the zip differ: {sorted(recorded ^ names)}"
        tags = [l.split(": ", 1)[1] for l in z.read(f"{dist_info}/WHEEL").decode().splitlines() if l.startswith("Tag:")]
        assert wheel.name.endswith(f"-{tags[0]}.whl") and tags[0].startswith("py3-none-linux_"), (wheel.name, tags)
        metadata = z.read(f"{dist_info}/METADATA").decode()
    halide = [l.split(": ", 1)[1] for l in metadata.splitlines() if l.startswith("Requires-Dist: halide")]
    assert halide and "==" in halide[0], f"METADATA pins no halide: {halide}"
    return halide[0]


def index_reachable():
    url = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple/")
    try:
        urllib.request.urlopen(url.rstrip("/") + "/halide/", timeout=15).close()
        return True
    except OSError:
        return False


def local_wheels(requirement):
    """Folders of PIP_FIND_LINKS holding a halide wheel of the pinned version."""
    version = requirement.split("==")[1]
    folders = [pathlib.Path(p) for p in os.environ.get("PIP_FIND_LINKS", "").split() if pathlib.Path(p).is_dir()]
    return [f for f in folders if any(f.glob(f"halide-{version}-*.whl"))]


def clean_env(venv):
    """The environment of a user with no clone: the fresh venv first on PATH, none of the build's."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "ATTNC_RUNTIME", "VIRTUAL_ENV", "LD_LIBRARY_PATH")}
    ours = (REPO, REPO.resolve(), (REPO / ".venv").resolve(), pathlib.Path(sys.prefix).resolve())
    path = [p for p in env.get("PATH", "").split(os.pathsep)
            if p and not any(q.is_relative_to(o) for q in (pathlib.Path(p), pathlib.Path(p).resolve()) for o in ours)]
    env["PATH"] = os.pathsep.join([str(venv / "bin")] + path)
    env["VIRTUAL_ENV"] = str(venv)
    return env


def run(command, env, cwd, what):
    start = time.monotonic()
    done = subprocess.run([str(c) for c in command], env=env, cwd=cwd, capture_output=True, text=True)
    print(f"test_wheel: {what}: {time.monotonic() - start:.1f} s")
    assert done.returncode == 0, f"{what} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done.stdout


def main():
    wheel_dir, work = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    wheels = sorted(wheel_dir.glob("attnc-*.whl"))
    assert len(wheels) == 1, f"want one attnc-*.whl in {wheel_dir} (make wheel), found {wheels}"
    halide = check_wheel_file(wheels[0])
    print(f"test_wheel: {wheels[0].name} ({wheels[0].stat().st_size / 1e6:.1f} MB) needs {halide}")

    online = index_reachable()
    local = local_wheels(halide)
    if not online and not local:
        print(f"test_wheel: SKIPPED: pip can reach no package index and no {halide} wheel is in PIP_FIND_LINKS")
        return SKIP

    venv = work / "venv"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    run([sys.executable, "-m", "venv", venv], clean_env(venv), work, "python -m venv (fresh, no system packages)")
    env = clean_env(venv)
    python = venv / "bin" / "python"
    offline = [] if online else ["--no-index"] + [f"--find-links={f}" for f in local]
    run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *offline, wheels[0]], env, work,
        "pip install the wheel (numpy and halide from " + ("the index)" if online else
        "PIP_FIND_LINKS, which must hold their dependencies too: imageio, pillow)"))

    with tempfile.TemporaryDirectory(prefix="attnc-wheel-") as folder:
        outside = pathlib.Path(folder).resolve()
        assert not outside.is_relative_to(REPO), f"{outside} lies in the repository"
        out = outside / "kernels"
        run([python, "-m", "attnc", "gen", "--spec", SPEC, "--shared", "-o", out], env, outside,
            f'python -m attnc gen --spec "{SPEC}" --shared')
        library = out / f"{KERNEL_ID}.so"
        assert library.is_file(), f"python -m attnc gen wrote no {library.name}: {sorted(os.listdir(out))}"
        kernel_id = run([venv / "bin" / "attnc", "id", "--spec", SPEC], env, outside, "the attnc command").strip()
        assert kernel_id == KERNEL_ID, kernel_id
        shutil.copy(pathlib.Path(__file__).with_name("wheel_check.py"), outside)
        print(run([python, "-I", outside / "wheel_check.py", library, KERNEL_ID], env, outside,
                  "the library from NumPy through the installed binding"), end="")
    return 0


sys.exit(main())
