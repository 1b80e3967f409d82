"""The end of an episode: grading, the episode outcome and the sealed trajectory."""

from __future__ import annotations

import msgspec

from events.base import Event
from events.model import ChatMessage, MessagesDelta


class AnswerGraded(Event, frozen=True, kw_only=True, tag="answer.graded"):
    """The final answer was compared with the ground truth."""

    step: int
    answer: str | None
    """The extracted final answer (``None`` when there was none)."""
    score: float
    method: str
    """Grader that decided (``math``, ``math_verify``, ``reference``, ``reference_evolve``,
    ``hendrycks``, ``exact``, ``choice``, a plugin's; ``none`` when nothing was graded)."""
    ground_truth: str | None = None
    detail: str = ""
    done_reason: str = "answer"
    """Why the episode is ending: ``answer`` when graded from an answer, else the stop reason."""
    role: str = "policy"
    branch: str | None = None
    episode: str = "main"
    """Which episode of the run (evolve runs have several: rounds, verifiers)."""
    grader: str = ""
    """The grader that gave the score, by name (``""``: no grader ran, or recorded before
    graders were named)."""
    grader_version: str = ""
    """Digest of that grader's code and settings (``handlers.grading.version``)."""


class AnswerRegraded(Event, frozen=True, kw_only=True, tag="answer.regraded"):
    """A recorded grade was computed again from the recorded answer, with no model call
    (``apollo regrade``); the original ``answer.graded`` stays as it was.

    Appended to the graded run; one per (grade, grader, grader version), so regrading
    again with the same grader adds nothing.
    """

    regraded_id: str
    """The ``answer.graded`` event this grade re-computes."""
    episode: str = "main"
    role: str = "policy"
    branch: str | None = None
    answer: str | None = None
    """The recorded final answer (what the original grade read)."""
    ground_truth: str | None = None
    old_score: float
    """The original grade's score (what any reward was paid from)."""
    old_grader: str = ""
    """The original grade's grader (its method for grades recorded before graders were named)."""
    old_grader_version: str = ""
    new_score: float
    reward: float | None = None
    """The episode's reward under the run's recorded reward rule with ``new_score``
    (``None``: that rule's plugin is not installed where it was regraded)."""
    grader: str
    grader_version: str
    method: str = ""
    """What the grader reported deciding with (``math``, ``math:timeout``...)."""
    detail: str = ""


class EpisodeEnded(Event, frozen=True, kw_only=True, tag="episode.ended"):
    """An episode stopped; ``done_reason`` says why."""

    done_reason: str
    """``answer``, ``max_steps``, ``empty_action``, ``model_failed`` or ``context_length``."""
    reward: float
    steps: int
    invalid_turns: int
    answer: str | None = None
    role: str = "policy"
    branch: str | None = None
    episode: str = "main"
    """Which episode of the run (evolve runs have several: rounds, verifiers)."""


class Turn(msgspec.Struct, frozen=True, kw_only=True):
    """One model turn of a trajectory, as a trainer needs it."""

    step: int
    prompt: list[ChatMessage]
    """The rendered prompt messages of this turn (always whole once decoded)."""
    prompt_delta: MessagesDelta | None = None
    """Wire form only: the prompt as its changes from the previous turn's
    (:mod:`events.wire_form`); decoding resolves it into ``prompt``."""
    response: str
    """The model's reply text (reasoning folded in)."""
    valid: bool = True
    observation: str | None = None
    """The tool observation that followed this turn, if any."""
    prompt_token_ids: list[int] | None = None
    response_token_ids: list[int] | None = None
    response_logprobs: list[float] | None = None
    tool: str | None = None
    policy_version: int | None = None
    """The policy version that served this turn's model call (``None``: unversioned)."""


class TrajectorySealed(Event, frozen=True, kw_only=True, tag="trajectory.sealed"):
    """A finished rollout with everything a trainer needs; never changes afterwards."""

    problem_id: str
    group_id: str
    sample_index: int
    data_source: str
    turns: list[Turn]
    group_size: int | None = None
    """Samples in this trajectory's group, when known (lets a trainer close groups)."""
    reward: float
    """Outcome reward of the trajectory (the grade)."""
    score: float
    done_reason: str
    invalid_turns: int
    model: str
    policy_version: str | None = None
    """The oldest policy version among its turns (staleness counts from it), as text;
    ``None`` when no turn carries one (an unversioned rollout)."""
    policy_versions: list[int] = []
    """Every distinct policy version its turns came from, ascending."""
    complete: bool = True
    """False when the episode ended without a graded answer (model failure etc.)."""
    role: str = "policy"
    """``policy``, or ``verifier`` for an evolve round's verifier episode."""
    branch: str | None = None
    episode: str = "main"
    """Which episode of the run (evolve runs have several: rounds, verifiers)."""
    graded: bool = True
    """False when no ground truth was known: ``score`` and ``reward`` then say nothing."""
    vote: float | None = None
    """The verifiers' label-free reward (evolve runs): a policy trajectory's share of
    approving verifiers, a verifier's 1.0 when it sided with the majority, else 0.0;
    ``None`` when no vote was taken."""
    round: int | None = None
    """The evolve round the episode belongs to (``None`` outside evolve runs)."""
    verifier: int | None = None
    """The verifier's index within its round (verifier trajectories only)."""
    grader: str = ""
    """The grader whose grade ``score`` comes from (a verifier's: its round's policy grade)."""
    grader_version: str = ""
