"""The rollout driver: problems x n samples for the current policy version, with backpressure.

Each problem becomes one GRPO group of ``samples`` runs (``ProblemSubmitted`` with the
group id, its size and, in ``metadata["policy_version"]``, the version the group was asked
for: the policy's last ``policy.activated`` when it was submitted). At most
``max_in_flight`` groups are open at once: the driver waits for a group's runs to end
(``run.completed`` / ``run.failed`` in the log) before it submits the next. How stale a
group may be when it is trained is the trainer's bound (``SubscriptionOptions.max_staleness``).

Run ids are ``run_id_for(prefix, problem_id, sample, settings=str(ordinal))``: the same
driver prefix and order submit the same ids again, which the log takes as no-ops.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import msgspec

from engine.datasets import Problem, group_id_for, run_id_for
from engine.errors import RunMovedOn
from engine.eventlog.port import EventLog
from engine.serving.history import PolicyHistory, active_in
from events.base import is_valid_run_id
from events.policy import DEFAULT_POLICY, policy_run_id
from events.run import RUN_ENDINGS, ProblemSubmitted, RunCompleted


class DriverOptions(msgspec.Struct, frozen=True, kw_only=True):
    samples: int
    """Samples per problem: the GRPO group size."""
    max_in_flight: int
    """Groups whose runs may be open at once."""
    run_prefix: str = "rollout"
    """First part of every run and group id (letters, digits, '-' and '_')."""
    workflow: str = "reason"
    config: dict[str, Any] = {}
    """Run setting overrides carried by every submission."""
    policy: str = DEFAULT_POLICY
    """The policy whose active version stamps the groups."""
    poll_interval: float = 0.2

    def __post_init__(self) -> None:
        for name in ("samples", "max_in_flight"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a whole number >= 1, not {value!r}")
        if not is_valid_run_id(self.run_prefix) or len(self.run_prefix) > 40:
            raise ValueError(f"run prefix {self.run_prefix!r} must be 1-40 letters, digits, '-' or '_'")
        if not is_valid_run_id(policy_run_id(self.policy)):
            raise ValueError(f"policy name {self.policy!r} must be letters, digits, '-' or '_'")


class SubmittedGroup(msgspec.Struct, kw_only=True):
    group_id: str
    problem_id: str
    run_ids: list[str]
    version: int | None
    """The policy version the group was asked for (``None``: none was active)."""
    open_runs: set[str] = msgspec.field(default_factory=set)
    failed: int = 0

    @property
    def done(self) -> bool:
        return not self.open_runs


class DriverStats(msgspec.Struct, kw_only=True):
    groups_submitted: int = 0
    groups_done: int = 0
    runs_failed: int = 0
    max_open_groups: int = 0
    """The most groups open at once (never above ``max_in_flight``)."""


class RolloutDriver:
    """Submits groups with at most ``max_in_flight`` open; see the module docstring."""

    def __init__(self, event_log: EventLog, options: DriverOptions) -> None:
        self.log = event_log
        self.options = options
        self.groups: list[SubmittedGroup] = []
        self.stats = DriverStats()
        self._open: dict[str, SubmittedGroup] = {}
        """Open run id -> its group."""
        self._read_to: dict[str, int] = {}
        """Open run id -> the last sequence of it already read."""
        self._policy_history = PolicyHistory(event_log, policy_run_id(options.policy))

    def open_run_ids(self) -> list[str]:
        """The runs submitted and not yet ended, sorted."""
        return sorted(self._open)

    @property
    def open_groups(self) -> int:
        return len({id(g) for g in self._open.values()})

    async def current_version(self) -> int | None:
        """The policy's served version: its last ``policy.activated`` (``None``: none yet)."""
        await self._policy_history.refresh()
        active = active_in(self._policy_history.events)
        return active.version if active else None

    async def submit(self, problems: Iterable[Problem]) -> list[SubmittedGroup]:
        """Submit one group per problem, waiting for room before each; returns them."""
        submitted = []
        for problem in problems:
            while self.open_groups >= self.options.max_in_flight:
                await self._wait_for_endings()
            submitted.append(await self._submit_group(problem))
        return submitted

    async def drain(self) -> None:
        """Wait until every submitted group's runs have ended."""
        while self._open:
            await self._wait_for_endings()

    def group_submissions(self, problem: Problem, ordinal: int, version: int | None) -> list[ProblemSubmitted]:
        """The submissions of ``problem``'s group when it is the ``ordinal``-th (from 0) this driver submits,
        for policy ``version``: run ids follow the prefix and that order, so a command can tell beforehand
        which are recorded already."""
        opts = self.options
        group_id = group_id_for(opts.run_prefix, problem.problem_id, settings=str(ordinal))
        run_ids = [run_id_for(opts.run_prefix, problem.problem_id, i, settings=str(ordinal))
                   for i in range(opts.samples)]
        return [ProblemSubmitted(
            event_id=run_id, run_id=run_id, occurred_at=datetime.now(UTC), problem_id=problem.problem_id,
            question=problem.question, ground_truth=problem.ground_truth, data_source=problem.data_source,
            workflow=opts.workflow, config=dict(opts.config), group_id=group_id, sample_index=index,
            group_size=opts.samples,
            metadata={**problem.metadata, "policy_version": version, "rollout_driver": opts.run_prefix},
        ) for index, run_id in enumerate(run_ids)]  # fmt: skip

    async def _submit_group(self, problem: Problem) -> SubmittedGroup:
        version = await self.current_version()
        submissions = self.group_submissions(problem, len(self.groups), version)
        run_ids = [event.run_id for event in submissions]
        group = SubmittedGroup(group_id=submissions[0].group_id or "", problem_id=problem.problem_id,
                               run_ids=run_ids, version=version, open_runs=set(run_ids))
        for event in submissions:
            await self._append_first(event)
            self._open[event.run_id] = group
        self.groups.append(group)
        self.stats.groups_submitted += 1
        self.stats.max_open_groups = max(self.stats.max_open_groups, self.open_groups)
        return group

    async def _append_first(self, event: ProblemSubmitted) -> None:
        """As the run's first event when it is new (its worker then needs no history read)."""
        try:
            await self.log.append(event, expected_run_seq=0)
        except RunMovedOn:
            await self.log.append(event)  # submitted before: the event id makes this a no-op

    async def _wait_for_endings(self) -> None:
        """Read what each open run recorded since the last look (direct gets, which a
        submitter's credentials allow); sleep a poll interval when none of them ended."""
        ended = False
        for run_id, group in list(self._open.items()):
            records = await self.log.read_run(run_id, after_seq=self._read_to.get(run_id, 0))
            if records:
                self._read_to[run_id] = records[-1].seq
            ending = next((r.event for r in records if isinstance(r.event, RUN_ENDINGS)), None)
            if ending is None:
                continue
            del self._open[run_id]
            self._read_to.pop(run_id, None)
            group.open_runs.discard(run_id)
            if not isinstance(ending, RunCompleted):
                group.failed += 1
                self.stats.runs_failed += 1
            if group.done:
                self.stats.groups_done += 1
            ended = True
        if not ended:
            await asyncio.sleep(self.options.poll_interval)
