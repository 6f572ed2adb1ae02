"""Reads a Ninja build's output on stdin, keeps all of it in LOG and shows one progress line (a bar
over Ninja's [done/total] count) instead. Usage: cmake --build ... 2>&1 | build_progress.py LOG."""
import pathlib
import re
import sys

# The progress lines are attn-inspect's (tools/attn_inspect/progress.py): one look for both.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tools" / "attn_inspect"))
from progress import Progress  # noqa: E402

STEP = re.compile(r"^\[(\d+)/(\d+)\] (?:\S+ \S+ )?(.*)$")


def main():
    progress = Progress("building")
    with open(sys.argv[1], "w", encoding="utf-8") as log:
        for line in sys.stdin:
            log.write(line)
            step = STEP.match(line)
            if step:
                name = step.group(3).strip().rsplit("/", 1)[-1][:40]
                progress.update(int(step.group(1)), note=name, total=int(step.group(2)))
    if progress.done:
        progress.finish()


main()
