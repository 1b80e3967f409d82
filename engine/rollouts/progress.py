"""The progress line of `apollo rollouts`: groups ended, groups open, runs failed, rate.

On a terminal the line is redrawn in place; otherwise (a log file, CI) a plain line is
written at most every ``interval`` seconds, and once at the end.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from engine.rollouts.driver import RolloutDriver


class RolloutProgress:
    """Draws what ``driver`` has done so far; ``clock`` is injectable for tests."""

    def __init__(self, driver: RolloutDriver, total_groups: int, *, stream: TextIO | None = None,
                 interval: float = 5.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.driver = driver
        self.total = total_groups
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.interval = interval
        self.clock = clock
        self.started = clock()
        self._last_line_at: float | None = None

    def line(self) -> str:
        stats = self.driver.stats
        elapsed = max(self.clock() - self.started, 1e-9)
        rate = stats.groups_done / elapsed * 60
        return (f"apollo rollouts: {stats.groups_done}/{self.total} groups ended, {self.driver.open_groups} open, "
                f"{stats.runs_failed} runs failed, {rate:.1f} groups/min")

    def draw(self, *, final: bool = False) -> None:
        """Redraw on a terminal; elsewhere print when ``interval`` has passed (always when final)."""
        now = self.clock()
        if self.tty:
            end = "\n" if final else ""
            print(f"\r{self.line()}\x1b[K", end=end, file=self.stream, flush=True)
        elif final or self._last_line_at is None or now - self._last_line_at >= self.interval:
            print(self.line(), file=self.stream, flush=True)
        self._last_line_at = now
