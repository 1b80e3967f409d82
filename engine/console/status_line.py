"""One status line for long commands: redrawn in place on a terminal; elsewhere (a log file,
CI) a plain line at most every ``interval`` seconds, and whenever the caller forces one."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


def bar(done: int, total: int, width: int) -> str:
    """``[####......]``: the share of ``total`` that is ``done``."""
    filled = min(width, int(width * done / max(1, total)))
    return f"[{'#' * filled}{'.' * (width - filled)}]"


class StatusLine:
    """Where a progress line goes, and when it is written."""

    def __init__(self, stream: TextIO | None = None, *, interval: float = 0.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.interval = interval
        self.clock = clock
        self.last_at: float | None = None
        """When a line was last written (``None``: never)."""

    def show(self, text: str, *, force: bool = False) -> None:
        now = self.clock()
        if self.tty:
            print(f"\r{text}\033[K", end="", file=self.stream, flush=True)
        elif force or self.last_at is None or now - self.last_at >= self.interval:
            print(text, file=self.stream, flush=True)
        else:
            return
        self.last_at = now

    def end(self) -> None:
        """Leave the terminal's cursor on a fresh line."""
        if self.tty:
            print(file=self.stream, flush=True)
