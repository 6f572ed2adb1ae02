"""Assembles the attnc wheel from a `cmake --install --component attnc_wheel` staging folder (the
package attnc/: the binding, libattnc_runtime.so and bin/attnc), writing its .dist-info
(METADATA, WHEEL, entry_points.txt, RECORD with sha256 hashes) as PEP 427 describes.
Usage: build_wheel.py STAGE OUT_DIR --version V --halide-version H [--readme MD] [--stamp FILE]."""
import argparse
import base64
import hashlib
import pathlib
import stat
import sys
import sysconfig
import zipfile

SUMMARY = "attnc: an ahead-of-time attention compiler (generator, C runtime and NumPy binding)"


def platform_tag():
    """linux_x86_64 on this machine: the generator and the runtime are built for it (no manylinux
    claim: they are linked against this system's libstdc++ and glibc)."""
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


def metadata(version, halide_version, readme):
    return "".join([
        "Metadata-Version: 2.1\n", "Name: attnc\n", f"Version: {version}\n", f"Summary: {SUMMARY}\n",
        "Requires-Python: >=3.9\n", "Requires-Dist: numpy\n",
        # The generator links libHalide from the halide wheel; it was built against exactly this one.
        f"Requires-Dist: halide=={halide_version}\n", "Description-Content-Type: text/markdown\n", "\n", readme])


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}\n"


def write_wheel(stage, out_dir, version, halide_version, readme):
    package = stage / "attnc"
    if not (package / "__init__.py").is_file() or not (package / "bin" / "attnc").is_file():
        sys.exit(f"build_wheel: {package} lacks __init__.py or bin/attnc; install the attnc_wheel component first")
    tag = f"py3-none-{platform_tag()}"
    dist_info = f"attnc-{version}.dist-info"
    extra = {
        f"{dist_info}/METADATA": metadata(version, halide_version, readme),
        f"{dist_info}/WHEEL": f"Wheel-Version: 1.0\nGenerator: attnc scripts/build_wheel.py\n"
                              f"Root-Is-Purelib: false\nTag: {tag}\n",
        f"{dist_info}/entry_points.txt": "[console_scripts]\nattnc = attnc.__main__:main\n",
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("attnc-*.whl"):
        old.unlink()
    wheel = out_dir / f"attnc-{version}-{tag}.whl"
    files = [(p.relative_to(stage).as_posix(), p.read_bytes(), p.stat().st_mode & 0o111)
             for p in sorted(package.rglob("*")) if p.is_file() and p.suffix != ".pyc"]
    files += [(name, text.encode(), 0) for name, text in extra.items()]
    record = "".join(record_line(name, data) for name, data, _ in files) + f"{dist_info}/RECORD,,\n"
    with zipfile.ZipFile(wheel.with_suffix(".partial"), "w") as z:
        for name, data, executable in files + [(f"{dist_info}/RECORD", record.encode(), 0)]:
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            # pip keeps the executable bit of a regular file's mode here (bin/attnc).
            info.external_attr = (stat.S_IFREG | (0o755 if executable else 0o644)) << 16
            z.writestr(info, data)
    wheel.with_suffix(".partial").rename(wheel)
    return wheel


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stage", type=pathlib.Path)
    parser.add_argument("out_dir", type=pathlib.Path)
    parser.add_argument("--version", required=True)
    parser.add_argument("--halide-version", required=True)
    parser.add_argument("--readme", type=pathlib.Path, help="the long description (markdown)")
    parser.add_argument("--stamp", type=pathlib.Path, help="a file touched once the wheel is written")
    a = parser.parse_args()
    readme = a.readme.read_text(encoding="utf-8") if a.readme else ""
    wheel = write_wheel(a.stage, a.out_dir, a.version, a.halide_version, readme)
    print(f"attnc: wrote {wheel} ({wheel.stat().st_size / 1e6:.1f} MB)")
    if a.stamp:
        a.stamp.write_text(wheel.name + "\n")


main()
