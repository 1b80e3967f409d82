"""What a grader reads for an episode, and which grader a run names.

The effector that grades an answer and `apollo regrade` share these rules, so a regrade
hands a grader exactly the text it would have been given had the run named it.
"""

from __future__ import annotations

from collections.abc import Sequence

from events.base import Event
from events.episode import AnswerGraded
from handlers.catalog import Catalog, ExtensionMissing
from handlers.episode.moves import graded_text, stepped_text
from handlers.episode.protocol import APOLLO, WHOLE_TEXT_GRADERS, implied_grader, protocol_of
from handlers.projections.episode import EpisodeState, episode_state
from handlers.run_settings import RunSettings

NO_ANSWER_METHODS = frozenset({"none", "ungraded"})
"""Methods of grades that graded nothing: the episode ended without an answer, or no
ground truth was known."""


def had_no_answer(graded: AnswerGraded) -> bool:
    """Whether the grade read no answer at all (so any grader gives it 0): the episode ended
    without one, or the reply held none (a whole-text grader reads the replies themselves)."""
    return graded.method in NO_ANSWER_METHODS or (not graded.answer and graded.method not in WHOLE_TEXT_GRADERS)


def run_grader(run: RunSettings) -> str:
    """The grader a run names: its ``episode.grading``, else what its protocol implies."""
    protocol = protocol_of(run)
    if protocol == APOLLO:
        return run.episode.grading or "math_verify"
    return str(run.episode.grading or implied_grader(protocol))


def answer_block_text(state: EpisodeState, final_answer: str, mode: str) -> str:
    """Under the ``apollo`` protocol: the final answer, except that the reference grader
    reads the concatenated raw replies with its own extraction."""
    if mode == "reference":
        return "\n".join(step.response or "" for step in state.steps)
    return final_answer


def ending_text(state: EpisodeState, mode: str, catalog: Catalog) -> str | None:
    """Under a reference protocol: the whole stepped text for the reference graders, the
    last reply's final answer (as the run's domain extracts it) for any other grader."""
    if mode in WHOLE_TEXT_GRADERS:
        return graded_text(state)
    last = state.last()
    return catalog.domain_of(state.run).final_answer(stepped_text(last), None, _question(state)) if last else None


def current_extraction(state: EpisodeState, recorded: str, catalog: Catalog) -> str | None:
    """The final answer today's extraction reads from the reply that ended the episode: which
    box is the answer (a hedge, a box a reader never sees) is part of grading, so a regrade
    reads the reply again rather than trusting the answer extracted when it was recorded."""
    last = state.last()
    if last is None or not last.response:
        return recorded
    try:
        domain = catalog.domain_of(state.run)
    except ExtensionMissing:
        return recorded  # a plugin domain not installed here: its own extraction stands
    return domain.final_answer(last.response, recorded, _question(state))


def _question(state: EpisodeState) -> str | None:
    """The problem's question, which extraction reads a final box's subject against."""
    return state.problem.question if state.problem is not None else None


def graded_episode(history: Sequence[Event], graded: AnswerGraded) -> EpisodeState:
    """The episode ``graded`` closed, as it stood when graded (``history``: the run up to ``graded``)."""
    return episode_state(history, graded.episode)


def regrade_text(state: EpisodeState, graded: AnswerGraded, mode: str, catalog: Catalog) -> str | None:
    """The text grader ``mode`` reads for the episode ``graded`` closed (``None``: no answer);
    ``state`` is that episode (:func:`graded_episode`).

    Raises:
        handlers.catalog.ExtensionMissing: the run's domain is a plugin ``catalog`` lacks
            (only asked for under a reference protocol).
    """
    if graded.method in NO_ANSWER_METHODS or graded.ground_truth is None:
        return None
    if protocol_of(state.run) == APOLLO:
        answer = current_extraction(state, graded.answer, catalog) if graded.answer else None
        text = answer_block_text(state, answer, mode) if answer else None
    else:
        text = ending_text(state, mode, catalog)
    return text if text and text.strip() else None
