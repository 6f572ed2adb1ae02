"""`python -m attnc ...` and the `attnc` command of the wheel: runs the attnc generator (a C++
program that links libHalide) with the same arguments, e.g. `python -m attnc gen --spec ... --shared
-o DIR`. The binding (`import attnc`) works without it; only generating kernels needs it."""
import importlib.util
import os
import pathlib
import sys

_HERE = pathlib.Path(__file__).resolve().parent


def tool_path():
    """The generator: bin/attnc in this package (the wheel), else the source tree's build/tools/attnc
    (an editable install), else $PREFIX/bin/attnc (`make install`: the package in $PREFIX/lib/python)."""
    for candidate in (_HERE / "bin" / "attnc", _HERE.parent.parent / "build" / "tools" / "attnc",
                      _HERE.parents[2] / "bin" / "attnc"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def _halide_library_dir():
    """lib64 of the installed halide package (libHalide.so), found without importing it."""
    spec = importlib.util.find_spec("halide")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = pathlib.Path(list(spec.submodule_search_locations)[0]).resolve() / "lib64"
    return found if (found / "libHalide.so").is_file() else None


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    tool = tool_path()
    if tool is None:
        sys.stderr.write("attnc: the generator is not part of this installation (no attnc/bin/attnc); install "
                         "the attnc wheel (`make wheel` in the repository) to generate kernels from Python\n")
        return 2
    env = dict(os.environ)
    halide = _halide_library_dir()
    # The wheel's generator finds libHalide through its RUNPATH when both packages share a
    # site-packages; a halide installed elsewhere (user site, another path entry) is named here.
    if tool.parent == _HERE / "bin" and halide is not None and halide != _HERE.parent / "halide" / "lib64":
        env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (str(halide), env.get("LD_LIBRARY_PATH")) if p)
    sys.stdout.flush()
    os.execve(tool, [str(tool)] + args, env)
    return 0  # not reached: execve replaces this process


if __name__ == "__main__":
    sys.exit(main())
