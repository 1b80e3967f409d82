"""Progress lines: `apollo run` (runs done, rate in runs/min, time left, running accuracy) and
`apollo rollouts` (groups ended and open, runs failed, rate).

On a terminal the line is redrawn in place; otherwise (a log file, CI) a plain line is
written at most every ``interval`` seconds, and once at the end.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

from engine.console.status_line import StatusLine, bar
from engine.rollouts.driver import RolloutDriver
from replay.dataset_scores import SampleResult, could_not_complete, is_correct

STALL_S = 10.0
"""Seconds without a finished run after which the line names the runs it waits for."""
STALL_NAMED = 3
"""At most this many runs are named (more in flight is a busy run, not a stall)."""


class Progress:
    """Counts finished runs and draws the line; ``clock`` is injectable for tests."""

    def __init__(self, total: int, resumed: list[SampleResult | None], *, stream: TextIO | None = None,
                 interval: float = 5.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.total = total
        self.status = StatusLine(stream, interval=interval, clock=clock)
        self.stream = self.status.stream
        self.clock = clock
        self.started = clock()
        self.resumed = len(resumed)
        self.done = 0
        self.correct = self.graded = self.incomplete = 0
        for result in resumed:
            self._count(result)
        self.open_runs: list[str] = []
        """Runs submitted and not finished: what the line says it waits for."""
        self._last_finish_at = self.started
        if resumed:
            print(f"apollo run: resuming, {len(resumed)}/{total} runs already finished", file=self.stream)
        self._draw(force=True)

    def advance(self, results: list[SampleResult | None]) -> None:
        """Runs that finished since the last call (``None``: no readable submission)."""
        if not results:
            return
        self.done += len(results)
        self._last_finish_at = self.clock()
        for result in results:
            self._count(result)
        self._draw(force=False)

    def waiting_on(self, open_runs: set[str]) -> None:
        """The runs in flight now (shown as a count; named once nothing has finished for a while)."""
        self.open_runs = sorted(open_runs)
        self._draw(force=False)  # a stalled run still gets its line every interval

    def close(self) -> None:
        self._draw(force=not self.status.tty or self.status.last_at is None)
        self.status.end()

    @property
    def finished(self) -> int:
        """Runs finished, resumed ones included."""
        return self.resumed + self.done

    def metrics(self) -> dict[str, float]:
        """The numbers on the line, for the trackers."""
        numbers = {"runs_finished": float(self.finished), "could_not_complete": float(self.incomplete)}
        elapsed = self.clock() - self.started
        if self.done and elapsed > 0:
            numbers["runs_per_s"] = self.done / elapsed
        if self.graded:
            numbers["accuracy"] = self.correct / self.graded
        return numbers

    def line(self) -> str:
        finished = self.finished
        parts = [f"{bar(finished, self.total, 30)} {finished}/{self.total} runs"]
        elapsed = self.clock() - self.started
        if self.done and elapsed > 0:
            rate = self.done / elapsed
            parts.append(f"{60 * rate:.1f} runs/min")  # one unit for the whole run: the figures stay comparable
            parts.append(f"ETA {_clock(max(0, self.total - finished) / rate)}")
        if self.graded:
            parts.append(f"accuracy {self.correct / self.graded:.3f} ({self.correct}/{self.graded})")
        if self.incomplete:
            parts.append(f"{self.incomplete} could not complete")
        parts += self._waiting()
        return "  ".join(parts)

    def _waiting(self) -> list[str]:
        """``N in flight``; after ``STALL_S`` with no run finished, which runs it waits for."""
        if not self.open_runs or self.finished >= self.total:
            return []
        stalled = self.clock() - self._last_finish_at
        if stalled < STALL_S or len(self.open_runs) > STALL_NAMED:
            return [f"{len(self.open_runs)} in flight"]
        return [f"waiting {stalled:.0f} s on {', '.join(self.open_runs)} (apollo show RUN)"]

    def _count(self, result: SampleResult | None) -> None:
        if result is None or could_not_complete(result):
            self.incomplete += 1
        elif result.score is not None:
            self.graded += 1
            self.correct += is_correct(result)

    def _draw(self, *, force: bool) -> None:
        self.status.show(self.line(), force=force)


def _clock(seconds: float) -> str:
    """``1:05:09`` or ``4:07``."""
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class RolloutProgress:
    """The line of `apollo rollouts`, read off ``driver`` (a :class:`RolloutDriver`)."""

    def __init__(self, driver: RolloutDriver, total_groups: int, *, stream: TextIO | None = None,
                 interval: float = 5.0, clock: Callable[[], float] = time.monotonic,
                 not_completed: Callable[[], int] = lambda: 0) -> None:
        self.driver = driver
        self.not_completed = not_completed
        """Runs that ended ``run.completed`` without the model's answer judged (the driver counts them
        as ended, `apollo runs` lists them as failed)."""
        self.total = total_groups
        self.status = StatusLine(stream, interval=interval, clock=clock)
        self.clock = clock
        self.started = clock()

    def line(self) -> str:
        stats = self.driver.stats
        elapsed = max(self.clock() - self.started, 1e-9)
        rate = stats.groups_done / elapsed * 60
        return (f"apollo rollouts: {stats.groups_done}/{self.total} groups ended, {self.driver.open_groups} open, "
                f"{stats.runs_failed + self.not_completed()} runs failed, {rate:.1f} groups/min")

    def draw(self, *, final: bool = False) -> None:
        """Redraw on a terminal; elsewhere print when ``interval`` has passed (always when final)."""
        self.status.show(self.line(), force=final)
        if final:
            self.status.end()
