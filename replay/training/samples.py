"""Training samples from sealed trajectories, in three layouts (pure, no tokenizer).

A sample is a prompt (chat messages) followed by response *segments*: text the model
wrote (trained) and, in the ``multi_turn`` layout, tool observations between turns (not
trained). Rewards are attached to segments and placed on their last token later, by
``replay.training.tokens``. Trajectories that cannot be trained are never dropped
silently: they come back in ``SampleSet.skipped`` with a reason.
"""

from __future__ import annotations

from typing import Final, Literal

import msgspec

from events import ChatMessage, TrajectorySealed, Turn

Layout = Literal["per_turn", "multi_turn", "sft"]
LAYOUTS: Final[tuple[str, ...]] = ("per_turn", "multi_turn", "sft")
REWARD_SOURCES: Final[tuple[str, ...]] = ("ground_truth", "verifier_vote")
"""Where a sample's outcome reward comes from: the grade against the ground truth, or the
verifiers' label-free vote of an evolve run."""
REGRADED: Final = "regraded"
EXPORT_REWARD_SOURCES: Final[tuple[str, ...]] = (*REWARD_SOURCES, REGRADED)
"""An export may also reward with the latest regrade (`apollo regrade`); a trainer reading the
live stream cannot: its rollouts have not been regraded."""
INVALID_TURN_PENALTY: Final = 0.1
"""Subtracted from an invalid turn's reward (the reference's ``invalid_action_penalty_coef``)."""


SEGMENT_SEPARATOR = "\n\n"
"""Between the segments of a multi-turn response in its one-text form."""

class Segment(msgspec.Struct, frozen=True, kw_only=True):
    """A stretch of response text; ``trained`` segments get loss mask 1."""

    role: str
    """``assistant`` for model text, ``user``/``tool`` for observations."""
    text: str
    trained: bool
    token_ids: list[int] | None = None
    """Token ids recorded at generation time, used verbatim when present."""
    penalty: float = 0.0
    """Subtracted at this segment's last token (invalid turn)."""
    step: int | None = None


class Sample(msgspec.Struct, frozen=True, kw_only=True):
    """One training example with the metadata verl's batch carries per row."""

    layout: str
    uid: str
    """The GRPO group id (the trajectory's ``group_id``)."""
    traj_uid: str
    """The trajectory's event id (unique per rollout)."""
    run_id: str
    problem_id: str
    data_source: str
    sample_index: int
    step: int | None
    """The turn's step (``per_turn``/``sft``); ``None`` for a whole trajectory."""
    prompt: list[ChatMessage]
    prompt_token_ids: list[int] | None
    response: list[Segment]
    outcome_reward: float
    """Trajectory outcome reward, placed on the last trained token."""
    is_action_valid: bool
    episode_reward: float
    episode_length: int
    tool_callings: int
    score: float
    policy_version: str | None = None
    response_logprobs: list[float] | None = None
    model: str = ""
    """The model that produced the trajectory."""
    role: str = "policy"
    """``policy``, or ``verifier`` for an evolve verifier episode."""
    vote: float | None = None
    """The verifiers' vote of the trajectory (whatever ``reward_source`` chose)."""
    reward_source: str = "ground_truth"

    @property
    def reward(self) -> float:
        """Total scalar reward of the sample (outcome minus penalties)."""
        return self.outcome_reward - sum(s.penalty for s in self.response)

    @property
    def response_text(self) -> str:
        """The response as one text; a reply and the observation after it are kept apart by a
        blank line (``messages`` keeps them as separate chat messages)."""
        return SEGMENT_SEPARATOR.join(s.text for s in self.response)


class Skipped(msgspec.Struct, frozen=True, kw_only=True):
    """A trajectory (or one of its turns) that produced no sample, and why."""

    traj_uid: str
    run_id: str
    group_id: str
    reason: str
    step: int | None = None


class SampleSet(msgspec.Struct, kw_only=True):
    """Samples built from some trajectories plus what was left out."""

    samples: list[Sample] = msgspec.field(default_factory=list)
    skipped: list[Skipped] = msgspec.field(default_factory=list)

    def extend(self, other: SampleSet) -> None:
        self.samples.extend(other.samples)
        self.skipped.extend(other.skipped)


class Regraded(msgspec.Struct, frozen=True, kw_only=True):
    """A trajectory's reward and score after the latest regrade of the grade they came from."""

    reward: float
    score: float


class SampleOptions(msgspec.Struct, frozen=True, kw_only=True):
    """How samples are built."""

    invalid_turn_penalty: float = INVALID_TURN_PENALTY
    sft_min_score: float = 1.0
    """A trajectory is 'correct' for SFT when its score reaches this."""
    observation_role: str = "user"
    """Role of tool observations in the ``multi_turn`` chat (``user`` or ``tool``)."""
    reward_source: str = "ground_truth"
    """One of ``EXPORT_REWARD_SOURCES``; a trajectory without that reward is skipped with a reason."""
    regraded: dict[str, Regraded] = {}
    """Trajectory id -> its regraded reward (``reward_source`` ``regraded`` only;
    :func:`replay.audit.regraded_rewards.regraded_rewards` builds it)."""

    def __post_init__(self) -> None:
        if self.reward_source not in EXPORT_REWARD_SOURCES:
            msg = (
                f"unknown reward source {self.reward_source!r}; "
                f"expected one of {', '.join(EXPORT_REWARD_SOURCES)}"
            )
            raise ValueError(msg)


def build_samples(
    trajectory: TrajectorySealed, layout: str, options: SampleOptions | None = None
) -> SampleSet:
    """Samples of one trajectory in ``layout``; unusable input lands in ``skipped``.

    Raises:
        ValueError: ``layout`` is not one of ``LAYOUTS``.
    """
    if layout not in LAYOUTS:
        msg = f"unknown layout {layout!r}; expected one of {', '.join(LAYOUTS)}"
        raise ValueError(msg)
    opts = options or SampleOptions()
    reason = _skip_reason(trajectory, layout, opts)
    if reason is not None:
        return SampleSet(skipped=[_skipped(trajectory, reason)])
    if layout == "per_turn":
        return SampleSet(samples=[_turn_sample(trajectory, t, opts) for t in trajectory.turns])
    if layout == "multi_turn":
        return SampleSet(samples=[_chat_sample(trajectory, opts)])
    return _sft_samples(trajectory, opts)


def build_many(
    trajectories: list[TrajectorySealed], layout: str, options: SampleOptions | None = None
) -> SampleSet:
    """``build_samples`` over several trajectories, in order."""
    out = SampleSet()
    for trajectory in trajectories:
        out.extend(build_samples(trajectory, layout, options))
    return out


def _skip_reason(t: TrajectorySealed, layout: str, opts: SampleOptions) -> str | None:
    if not t.complete:
        return f"incomplete trajectory (done_reason={t.done_reason})"
    if not t.turns:
        return "trajectory has no turns"
    if opts.reward_source in ("ground_truth", REGRADED) and not t.graded:
        return "no ground truth was known (try reward_source verifier_vote)"
    if opts.reward_source == "verifier_vote" and t.vote is None:
        return "no verifier vote was taken (try reward_source ground_truth)"
    if opts.reward_source == REGRADED and t.event_id not in opts.regraded:
        return f"never regraded (run `apollo regrade {t.run_id}` first; ground_truth keeps the original grade)"
    if layout == "sft" and _outcome(t, opts) < opts.sft_min_score:
        return f"not correct for sft ({opts.reward_source} {_outcome(t, opts)} < {opts.sft_min_score})"
    return None


def outcome_reward(t: TrajectorySealed, reward_source: str) -> float | None:
    """The outcome reward ``reward_source`` gives ``t`` (``None``: it has none from there)."""
    if reward_source == "verifier_vote":
        return t.vote
    return t.reward if t.graded else None


def _outcome(t: TrajectorySealed, opts: SampleOptions) -> float:
    """The trajectory's reward from the chosen source (checked present by ``_skip_reason``)."""
    if opts.reward_source == "verifier_vote":
        return t.vote if t.vote is not None else 0.0
    if opts.reward_source == REGRADED:
        return opts.regraded[t.event_id].reward
    return t.reward


def _skipped(t: TrajectorySealed, reason: str, step: int | None = None) -> Skipped:
    return Skipped(
        traj_uid=t.event_id, run_id=t.run_id, group_id=t.group_id, reason=reason, step=step
    )


def _common(t: TrajectorySealed, opts: SampleOptions) -> dict[str, object]:
    reward = _outcome(t, opts)
    return {
        "uid": t.group_id,
        "traj_uid": t.event_id,
        "run_id": t.run_id,
        "problem_id": t.problem_id,
        "data_source": t.data_source,
        "sample_index": t.sample_index,
        "outcome_reward": reward,
        "episode_reward": reward,
        "episode_length": len(t.turns),
        "tool_callings": sum(1 for turn in t.turns if turn.tool),
        "score": opts.regraded[t.event_id].score if opts.reward_source == REGRADED else t.score,
        "policy_version": t.policy_version,
        "model": t.model,
        "role": t.role,
        "vote": t.vote,
        "reward_source": opts.reward_source,
    }


def _reply(turn: Turn, opts: SampleOptions) -> Segment:
    penalty = 0.0 if turn.valid else opts.invalid_turn_penalty
    return Segment(
        role="assistant",
        text=turn.response,
        trained=True,
        token_ids=turn.response_token_ids,
        penalty=penalty,
        step=turn.step,
    )


def _turn_sample(t: TrajectorySealed, turn: Turn, opts: SampleOptions) -> Sample:
    return Sample(
        layout="per_turn",
        step=turn.step,
        prompt=list(turn.prompt),
        prompt_token_ids=turn.prompt_token_ids,
        response=[_reply(turn, opts)],
        is_action_valid=turn.valid,
        response_logprobs=turn.response_logprobs,
        **_common(t, opts),  # type: ignore[arg-type]
    )


def _chat_sample(t: TrajectorySealed, opts: SampleOptions) -> Sample:
    segments: list[Segment] = []
    last = len(t.turns) - 1
    for i, turn in enumerate(t.turns):
        segments.append(_reply(turn, opts))
        # A trailing observation is followed by no model text, so it teaches nothing.
        if turn.observation is not None and i < last:
            segments.append(
                Segment(
                    role=opts.observation_role, text=turn.observation, trained=False, step=turn.step
                )
            )
    first = t.turns[0]
    return Sample(
        layout="multi_turn",
        step=None,
        prompt=list(first.prompt),
        prompt_token_ids=first.prompt_token_ids,
        response=segments,
        is_action_valid=all(turn.valid for turn in t.turns),
        **_common(t, opts),  # type: ignore[arg-type]
    )


def _sft_samples(t: TrajectorySealed, opts: SampleOptions) -> SampleSet:
    out = SampleSet()
    for turn in t.turns:
        if not turn.valid:
            out.skipped.append(_skipped(t, "invalid turn left out of sft", turn.step))
            continue
        reply = Segment(role="assistant", text=turn.response, trained=True, step=turn.step)
        out.samples.append(
            Sample(
                layout="sft",
                step=turn.step,
                prompt=list(turn.prompt),
                prompt_token_ids=turn.prompt_token_ids,
                response=[reply],
                is_action_valid=True,
                **_common(t, opts),  # type: ignore[arg-type]
            )
        )
    return out
