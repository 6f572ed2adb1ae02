"""Progress lines for long steps, as pip and tqdm users expect: on a terminal one line redrawn in
place, with a bar where the count is known; in a log or a pipe a line at each tenth of the way.
Written to stderr, so that what a tool prints on stdout stays as it was."""
import sys
import time


class Progress:
    """Progress("ablating heads", total=72): update() after each step, finish() at the end."""

    def __init__(self, what, total=None, stream=None, width=30):
        self.what, self.total, self.width = what, total, width
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.done = 0
        self.shown_tenth = -1
        self.start = time.monotonic()
        self.shown_seconds = 0

    def line(self, note=""):
        """'ablating heads [#########.....................] 24/72 L1.h11'."""
        if self.total:
            filled = self.width * min(self.done, self.total) // self.total
            text = f"{self.what} [{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total}"
        else:
            text = f"{self.what}: {self.done}"
        return f"{text} {note}" if note else text

    def update(self, done=None, note="", total=None):
        """One more step done (or `done` of them); `total` where the count changed (a build's)."""
        self.done = self.done + 1 if done is None else done
        self.total = total or self.total
        if self.tty:
            self.stream.write("\r" + self.line(note) + "\x1b[K")
        elif self.total and 10 * self.done // self.total > self.shown_tenth:
            self.shown_tenth = 10 * self.done // self.total
            self.stream.write(self.line(note) + "\n")
        self.stream.flush()

    def tick(self, every=30):
        """For one long step with no count (a command that prints nothing while it works): 'generating:
        42 s', redrawn on a terminal at each call, a line each `every` seconds in a log or pipe."""
        seconds = int(time.monotonic() - self.start)
        if self.tty:
            self.stream.write(f"\r{self.what}: {seconds} s\x1b[K")
        elif seconds >= self.shown_seconds + every:
            self.shown_seconds = seconds - seconds % every
            self.stream.write(f"{self.what}: {self.shown_seconds} s\n")
        self.stream.flush()

    def finish(self, note=""):
        """'ablating heads: 72/72 in 20.4 s' ('generating: done in 97.1 s' after tick), on the
        progress line's place."""
        count = f"{self.done}/{self.total}" if self.total else f"{self.done}" if self.done else "done"
        text = f"{self.what}: {count} in {time.monotonic() - self.start:.1f} s" + (f" {note}" if note else "")
        self.stream.write(("\r" + text + "\x1b[K\n") if self.tty else text + "\n")
        self.stream.flush()
