"""The progress line of `apollo rollouts`: what it counts and when it prints off a terminal."""

from __future__ import annotations

import io

from engine.cli.progress import RolloutProgress
from engine.rollouts.driver import DriverStats


class _Driver:
    def __init__(self) -> None:
        self.stats = DriverStats()
        self.open_groups = 0


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_line_counts_ended_and_open_groups_failed_runs_and_the_rate() -> None:
    """The progress line counts ended and open groups, failed runs, and the groups-per-minute rate."""
    driver, clock = _Driver(), _Clock()
    progress = RolloutProgress(driver, 8, stream=io.StringIO(), clock=clock)
    driver.stats.groups_done, driver.stats.runs_failed, driver.open_groups = 3, 1, 2
    clock.now += 30.0
    assert progress.line() == "apollo rollouts: 3/8 groups ended, 2 open, 1 runs failed, 6.0 groups/min"


def test_off_a_terminal_a_line_is_written_at_most_every_interval_and_always_at_the_end() -> None:
    """Off a terminal, progress lines are written at most once per interval and always at the end."""
    driver, clock, stream = _Driver(), _Clock(), io.StringIO()
    progress = RolloutProgress(driver, 2, stream=stream, interval=5.0, clock=clock)
    progress.draw()
    clock.now += 1.0
    progress.draw()  # too soon: nothing
    clock.now += 5.0
    driver.stats.groups_done = 1
    progress.draw()
    driver.stats.groups_done = 2
    progress.draw(final=True)
    lines = stream.getvalue().splitlines()
    assert [line.split(":")[1].split(",")[0].strip() for line in lines] == [
        "0/2 groups ended", "1/2 groups ended", "2/2 groups ended"]
    assert "\r" not in stream.getvalue()
