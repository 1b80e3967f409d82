"""How a run's completion reads on its timelines (`apollo show` and the HTML page), its row and its
results.

A run that completed ``model_failed`` ended without the model's answer being judged: its
recorded score 0 is no verdict, so it reads as not completed, with no score beside it. So does an
evolve run whose every round ended that way: it records ``evolved``, but no round judged the model.
"""

from __future__ import annotations

from events.run import RunCompleted
from handlers.answer_text import answer_phrase
from replay.dataset_scores import INCOMPLETE_REASONS


def completion_phrase(event: RunCompleted) -> str:
    """``completed: answer, answer '18', score 1``, or ``not completed (model_failed): ...``."""
    if event.done_reason in INCOMPLETE_REASONS:
        return f"not completed ({event.done_reason}): no answer was judged, so no score"
    score = "ungraded" if event.score is None else f"score {event.score:g}"
    return f"completed: {event.done_reason}, {answer_phrase(event.answer)}, {score}"


def round_incomplete(done_reason: str) -> bool:
    """Whether a round (``round.completed``) ended without the model's answer judged."""
    return done_reason in INCOMPLETE_REASONS


def done_reason_read(event: RunCompleted, rounds: int, incomplete: int) -> str:
    """The run's ending as it reads: ``model_failed`` for an evolve run none of whose ``rounds``
    got the model's answer judged (``incomplete`` of them ended so), else what it recorded."""
    if rounds and incomplete == rounds and event.done_reason not in INCOMPLETE_REASONS:
        return "model_failed"
    return event.done_reason
