"""How a run's completion reads on its timelines (`apollo show` and the HTML page).

A run that completed ``model_failed`` ended without the model's answer being judged: its
recorded score 0 is no verdict, so it reads as not completed, with no score beside it.
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
