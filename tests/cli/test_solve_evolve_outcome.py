"""`apollo solve --workflow evolve` reports the chosen round's answer and grade, and its rounds."""

from __future__ import annotations

from datetime import UTC, datetime

from engine.app.operations import outcome
from engine.cli.solve import print_result
from events.evolve import RoundCompleted
from events.record import Recorded
from events.run import ProblemSubmitted, RunCompleted, RunStarted

AT = datetime(2026, 1, 1, tzinfo=UTC)


def _evolve_run(answer: str | None, score: float | None) -> list[Recorded]:
    events = [
        ProblemSubmitted(event_id="r", run_id="r", occurred_at=AT, problem_id="p", question="q", ground_truth="18",
                         workflow="evolve"),
        RunStarted(event_id="s", run_id="r", occurred_at=AT, workflow="evolve"),
        RoundCompleted(event_id="c1", run_id="r", occurred_at=AT, round=0, answer="17", correct=0.0),
        RoundCompleted(event_id="c2", run_id="r", occurred_at=AT, round=1, answer=answer, correct=score),
        RunCompleted(event_id="d", run_id="r", occurred_at=AT, done_reason="evolved", answer=answer, score=score),
    ]
    return [Recorded(seq=n, subject=f"apollo.run.r.{n}", event=e) for n, e in enumerate(events, 1)]


def test_an_evolve_run_shows_its_chosen_answer_grade_and_rounds(capsys) -> None:
    """No main episode: the answer and grade come from run.completed, and the rounds are counted."""
    result = outcome(_evolve_run("18", 1.0))
    assert (result["answer"], result["score"], result["rounds"], result["incomplete"]) == ("18", 1.0, 2, False)
    print_result(result)
    shown = capsys.readouterr().out
    assert "answer:  18" in shown and "grade:   correct (score 1, chosen round)" in shown
    assert "rounds:  2" in shown and "None" not in shown


def test_an_evolve_run_without_a_chosen_answer_says_so(capsys) -> None:
    """No round produced an answer: `no answer`, never a made-up grade or a `None`."""
    print_result(outcome(_evolve_run(None, None)))
    shown = capsys.readouterr().out
    assert "answer:  no answer" in shown and "grade:" not in shown and "None" not in shown


def test_a_run_without_rounds_never_borrows_a_chosen_round() -> None:
    """A reason run whose main episode left no grade is not reported as an evolve run's chosen round."""
    records = [r for r in _evolve_run("18", 1.0) if not isinstance(r.event, RoundCompleted)]
    result = outcome(records)
    assert "score" not in result and result.get("method") != "chosen round" and "rounds" not in result
