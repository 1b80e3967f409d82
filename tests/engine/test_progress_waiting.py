"""The progress line says what `apollo run` waits for: runs in flight, named once they stall."""

from __future__ import annotations

import io

from engine.cli.progress import STALL_S, Progress
from replay.dataset_scores import SampleResult


class _Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


class _Pipe(io.StringIO):
    def isatty(self) -> bool:
        return False


def _done() -> SampleResult:
    return SampleResult(problem_id="p", data_source="gsm8k", sample_index=0, score=1.0, done_reason="answer",
                        steps=1, tool_calls=0, tool_successes=0, finished=True)


def test_runs_in_flight_are_counted_on_the_line() -> None:
    """While runs finish steadily the line only counts those in flight."""
    clock = _Clock()
    progress = Progress(5, [], stream=_Pipe(), clock=clock)
    progress.waiting_on({"run-a", "run-b"})
    assert "2 in flight" in progress.line()
    assert "run-a" not in progress.line()


def test_a_stall_names_the_runs_waited_for_and_how_long() -> None:
    """Nothing finished for longer than STALL_S: the few open runs are named with the wait."""
    clock, out = _Clock(), _Pipe()
    progress = Progress(5, [], stream=out, clock=clock)
    progress.advance([_done(), _done()])
    clock.now += STALL_S + 2
    progress.waiting_on({"run-c", "run-d"})
    line = progress.line()
    assert f"waiting {STALL_S + 2:.0f} s on run-c, run-d" in line
    assert "apollo show" in line
    assert "run-c, run-d" in out.getvalue()  # drawn without a new finish


def test_a_busy_run_with_many_open_is_not_called_a_stall() -> None:
    """Dozens in flight and a slow model: a count, not a list of names."""
    clock = _Clock()
    progress = Progress(100, [], stream=_Pipe(), clock=clock)
    clock.now += STALL_S + 5
    progress.waiting_on({f"run-{i}" for i in range(20)})
    assert "20 in flight" in progress.line()
    assert "waiting" not in progress.line()


def test_nothing_open_means_nothing_said() -> None:
    """A finished or not yet started run has no waiting part."""
    progress = Progress(2, [], stream=_Pipe(), clock=_Clock())
    progress.waiting_on(set())
    assert "flight" not in progress.line() and "waiting" not in progress.line()
