"""answer.regraded and rollout.trained read as one line in `apollo show` and on the HTML page."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec

from engine.cli.render import summary
from engine.cli.runs import timeline_lines
from events import AnswerRegraded
from events.episode import AnswerGraded
from events.policy import RolloutTrained
from events.record import Recorded
from replay.timeline_html import render_html
from tests.replay.support import golden

NOW = datetime(2026, 1, 1, tzinfo=UTC)
REGRADED = AnswerRegraded(event_id="x", run_id="r", occurred_at=NOW, regraded_id="g", answer="42\ntext", old_score=1.0,
                          old_grader="math", new_score=0.0, grader="exact", grader_version="0a833d16e19e",
                          method="exact")
TRAINED = RolloutTrained(event_id="y", run_id="r", occurred_at=NOW, trajectory_id="t", group_id="g",
                         trainer="train-demo", step=3, policy_version=2, trainer_version=2, reward=1.0)


def test_a_regrade_and_a_training_are_one_line_each() -> None:
    """A re-grade and a trained trajectory each summarise as one line, unversioned ones saying so."""
    assert summary(REGRADED) == "answer '42\\ntext' re-graded: 1 by math -> 0 by exact 0a833d16e19e"
    assert summary(TRAINED) == "trajectory trained by train-demo at step 3 (policy v2, reward 1)"
    unversioned = msgspec.structs.replace(TRAINED, policy_version=None, reward=None)
    assert summary(unversioned) == "trajectory trained by train-demo at step 3 (unversioned)"


def test_a_graded_answer_names_its_grader_version() -> None:
    """A graded answer's summary names the grader and its version."""
    graded = AnswerGraded(event_id="g", run_id="r", occurred_at=NOW, step=1, answer="42", score=1.0, method="math",
                          grader="math", grader_version="69412f1c0fff")
    assert summary(graded) == "answer '42': score 1 by math 69412f1c0fff (answer)"


def test_the_timeline_and_the_page_show_them_after_the_runs_events() -> None:
    """The timeline and the HTML page show re-grade and training lines after the run's own events."""
    records = golden("good_code_then_answer")
    last = records[-1].seq
    run_id = records[0].event.run_id
    extra = [Recorded(last + 1, f"apollo.run.{run_id}.answer.regraded",
                      msgspec.structs.replace(REGRADED, run_id=run_id)),
             Recorded(last + 2, f"apollo.run.{run_id}.rollout.trained",
                      msgspec.structs.replace(TRAINED, run_id=run_id))]
    lines = timeline_lines([*records, *extra], [])
    assert "answer.regraded" in lines[-2] and "re-graded: 1 by math -> 0 by exact" in lines[-2]
    assert "rollout.trained" in lines[-1] and "at step 3" in lines[-1]
    page = render_html([[*records, *extra]])
    assert "re-graded 1 -&gt; 0 by exact 0a833d16e19e" in page and "trained by train-demo at step 3" in page


def test_an_answer_in_latex_reads_with_single_backslashes() -> None:
    """``x \\not= 42`` is shown as the model wrote it, not as an escaped Python literal."""
    from handlers.answer_text import answer_phrase

    assert answer_phrase("x \\not= 42") == "answer 'x \\not= 42'"
    assert answer_phrase("a\nb") == "answer 'a\\nb'"
    assert answer_phrase(None) == "no answer"
