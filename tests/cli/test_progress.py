"""The progress line of `apollo run`: rate, time left and running accuracy; throttled when not a terminal."""

from __future__ import annotations

import io

from engine.cli.progress import Progress
from replay.dataset_scores import SampleResult


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Pipe(io.StringIO):
    """Standard error redirected to a file."""

    def isatty(self) -> bool:
        return False


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def result(score: float | None, done_reason: str = "answer") -> SampleResult:
    return SampleResult(problem_id="p", data_source="gsm8k", sample_index=0, score=score, done_reason=done_reason,
                        steps=1, tool_calls=0, tool_successes=0, finished=True)


def test_line_shows_rate_eta_and_running_accuracy() -> None:
    """After 4 of 10 runs in 8 s: 30.0 runs/min, 12 s left, accuracy over the graded ones."""
    clock, out = FakeClock(), Pipe()
    progress = Progress(10, [], stream=out, clock=clock)
    clock.now += 8
    progress.advance([result(1.0), result(0.0), result(1.0), result(None, "model_failed")])
    line = progress.line()
    assert "4/10 runs" in line and "30.0 runs/min" in line and "ETA 0:12" in line
    assert "accuracy 0.667 (2/3)" in line and "1 could not complete" in line


def test_resumed_runs_count_toward_accuracy_but_not_the_rate() -> None:
    """Runs finished before this invocation are in the bar and the accuracy; the rate is of new runs only."""
    clock, out = FakeClock(), Pipe()
    progress = Progress(4, [result(1.0), result(1.0)], stream=out, clock=clock)
    assert "resuming, 2/4 runs already finished" in out.getvalue()
    assert "runs/min" not in progress.line() and "accuracy 1.000 (2/2)" in progress.line()
    clock.now += 2
    progress.advance([result(0.0)])
    assert "3/4 runs" in progress.line() and "30.0 runs/min" in progress.line() and "ETA 0:02" in progress.line()


def test_without_a_terminal_a_line_every_few_seconds_not_one_per_run() -> None:
    """Piped output gets the first line, then one per interval however many runs finish, and the last."""
    clock, out = FakeClock(), Pipe()
    progress = Progress(100, [], stream=out, clock=clock, interval=5.0)
    for _ in range(50):  # 50 runs finishing over 10 s
        clock.now += 0.2
        progress.advance([result(1.0)])
    progress.close()
    lines = out.getvalue().splitlines()
    assert 3 <= len(lines) <= 5
    assert "\r" not in out.getvalue() and lines[-1].startswith("[") and "50/100 runs" in lines[-1]


def test_on_a_terminal_the_line_is_redrawn_in_place() -> None:
    """A terminal gets the line redrawn (start, each advance, the end) and one final newline."""
    clock, out = FakeClock(), Terminal()
    progress = Progress(2, [], stream=out, clock=clock)
    progress.advance([result(1.0)])
    progress.advance([result(1.0)])
    progress.close()
    text = out.getvalue()
    assert text.count("\r") == 4 and text.count("\n") == 1 and text.endswith("\n") and "2/2 runs" in text


def test_the_rate_keeps_one_unit_as_the_run_slows_down() -> None:
    """A rate that falls from 0.5 to below 0.1 runs/s is shown in runs/min throughout, never switching units."""
    clock, out = FakeClock(), Pipe()
    progress = Progress(100, [], stream=out, clock=clock)
    clock.now += 2
    progress.advance([result(1.0)])
    fast = progress.line()
    clock.now += 60
    progress.advance([result(1.0)])
    slow = progress.line()
    assert "30.0 runs/min" in fast and "1.9 runs/min" in slow
    assert "runs/s" not in fast + slow
