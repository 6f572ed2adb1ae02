"""The progress lines of long steps (tools/attn_inspect/progress.py): a line per tenth of the way in
a log or pipe, one line redrawn in place on a terminal; and scripts/build_progress.py, which turns a
Ninja build's output into such a line and keeps the output in a log."""
import io
import pathlib
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools" / "attn_inspect"))
import checks  # noqa: E402
from progress import Progress  # noqa: E402


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_log_gets_a_line_per_tenth_with_a_bar():
    out = io.StringIO()
    p = Progress("ablating heads", total=20, stream=out, width=10)
    for _ in range(20):
        p.update()
    lines = out.getvalue().splitlines()
    assert lines[0] == "ablating heads [..........] 1/20", lines
    assert lines[1] == "ablating heads [#.........] 2/20", lines
    assert lines[-1] == "ablating heads [##########] 20/20", lines
    assert len(lines) == 11, lines  # 1/20, then each tenth
    p.finish()
    assert out.getvalue().splitlines()[-1].startswith("ablating heads: 20/20 in "), out.getvalue()


def test_a_terminal_gets_one_line_redrawn():
    out = Terminal()
    p = Progress("drawing", total=4, stream=out, width=4)
    p.update(note="L0.png")
    p.update(note="L1.png")
    assert out.getvalue() == "\rdrawing [#...] 1/4 L0.png\x1b[K\rdrawing [##..] 2/4 L1.png\x1b[K", repr(out.getvalue())
    p.finish()
    assert out.getvalue().endswith("\x1b[K\n") and "\rdrawing: 2/4 in " in out.getvalue(), repr(out.getvalue())


def test_a_build_becomes_a_progress_line_and_a_log():
    build = "".join(f"[{i}/10] Building CXX object codegen/CMakeFiles/attnc_codegen.dir/src/f{i}.cpp.o\n"
                    for i in range(1, 11)) + "ninja: no work to do.\n"
    with tempfile.TemporaryDirectory() as folder:
        log = pathlib.Path(folder) / "build.log"
        done = subprocess.run([sys.executable, str(REPO / "scripts" / "build_progress.py"), str(log)], input=build,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "", done.stdout
        assert log.read_text() == build
        lines = done.stderr.splitlines()
        assert lines[0] == f"building [{'###':.<30}] 1/10 f1.cpp.o", lines
        assert lines[-2] == f"building [{'#' * 30}] 10/10 f10.cpp.o", lines
        assert lines[-1].startswith("building: 10/10 in "), lines


checks.run(globals())
