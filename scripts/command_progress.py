"""Runs a command that prints nothing while it works (the demo's `attnc gen`: minutes for the host
set) under a progress line of the seconds so far, on stderr in build_progress.py's style; the
command's own output follows once it ends, its exit status is this script's.
Usage: command_progress.py WHAT COMMAND [ARG...]"""
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tools" / "attn_inspect"))
from progress import Progress  # noqa: E402


def main():
    progress = Progress(sys.argv[1])
    command = subprocess.Popen(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    while True:
        try:
            out, err = command.communicate(timeout=1)
            break
        except subprocess.TimeoutExpired:
            progress.tick()
    if command.returncode == 0:
        progress.finish()
    elif progress.tty:
        sys.stderr.write("\n")  # the command's error below the last progress line, not over it
    sys.stdout.buffer.write(out)
    sys.stderr.buffer.write(err)
    return command.returncode


sys.exit(main())
