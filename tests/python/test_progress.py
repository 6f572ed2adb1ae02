"""The progress lines of long steps (tools/attn_inspect/progress.py): a line per tenth of the way in
a log or pipe, one line redrawn in place on a terminal; scripts/build_progress.py, which turns a
Ninja build's output into such a line and keeps the output in a log; and scripts/command_progress.py,
the seconds so far of a command that prints nothing while it works (the demo's attnc gen)."""
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


def test_a_step_with_no_count_shows_its_seconds():
    out = io.StringIO()
    p = Progress("generating", stream=out)
    p.tick()
    assert out.getvalue() == "", repr(out.getvalue())  # a log: nothing in the first 30 s
    p.start -= 65
    p.tick()
    p.tick()
    assert out.getvalue() == "generating: 60 s\n", repr(out.getvalue())
    p.finish()
    assert out.getvalue().splitlines()[-1].startswith("generating: done in 65."), out.getvalue()
    term = Terminal()
    t = Progress("generating", stream=term)
    t.start -= 7
    t.tick()
    assert term.getvalue() == "\rgenerating: 7 s\x1b[K", repr(term.getvalue())


def test_a_silent_command_gets_a_progress_line_then_its_output():
    script = "import sys, time; time.sleep(1.5); print('generated 1 kernel(s)'); sys.stderr.write('note\\n'); sys.exit(3)"
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "command_progress.py"), "generating", sys.executable,
                           "-c", script], capture_output=True, text=True)
    assert done.returncode == 3, (done.returncode, done.stderr)
    assert done.stdout == "generated 1 kernel(s)\n", done.stdout
    assert done.stderr == "note\n", repr(done.stderr)  # failed: no "done" line
    ok = subprocess.run([sys.executable, str(REPO / "scripts" / "command_progress.py"), "generating", "true"],
                        capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout == "" and ok.stderr.startswith("generating: done in "), ok


checks.run(globals())
