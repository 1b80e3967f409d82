"""Exactly-once, GRPO-grouped training batches from the stream of sealed trajectories.

How "every rollout is trained exactly once" holds across trainer crashes:

1. A delivery is acknowledged only in ``TrainingBatch.commit()``, which the trainer calls
   *after* saving the checkpoint that contains the weights trained on that batch. A crash
   before that point leaves the messages unacknowledged; the broker redelivers them and
   the restarted trainer (restored from the previous checkpoint, which never saw them)
   trains them once.
2. The checkpoint also stores ``batch.cursor``: the ids of every trajectory trained so
   far. When the checkpoint is saved but the acks are lost (crash between the two, or a
   dropped ack), the broker redelivers trajectories the restored weights already contain;
   the subscription finds them in the cursor and acknowledges them without yielding.
   Trajectories are identified by ``event_id`` rather than stream sequence, so a
   duplicate publish that slipped past the stream's dedup window is dropped as well.
3. While a trajectory waits for its group, or sits in a yielded batch being trained, the
   subscription sends ``in_progress`` heartbeats so ``ack_wait`` does not expire. Should
   a redelivery still arrive, its handle is attached to the waiting copy and acknowledged
   with it, never yielded twice.

Groups are yielded whole (``group_size`` samples of one ``group_id``). A group still
incomplete after ``group_timeout`` seconds is yielded partial or skipped (acknowledged,
with a recorded reason), as configured. Once a group was yielded, late members of it are
acknowledged and recorded as skipped.

Off-policy bounds: a trajectory's version is the oldest policy version among its turns.
With ``max_staleness`` set, a ready group whose oldest member is more than that many
versions behind the trainer's ``policy_version`` (measured when the batch is taken) is
discarded: acknowledged without training, listed in ``skipped`` with the reason and
handed to ``on_discard`` (the engine's recorder appends ``rollout.discarded`` to the
trajectory's run). With ``allow_unversioned`` off, a trajectory with no numeric version
is discarded the same way. When ``on_discard`` fails, the deliveries are handed back for
redelivery and its error ends the iteration: nothing is acknowledged without its record.

What was trained is recorded the same way: ``commit(step=...)`` hands every trajectory of
the batch to ``on_commit`` (the engine's recorder appends ``rollout.trained`` to each
trajectory's run) before acknowledging it; when that fails, nothing is acknowledged and
the commit may be retried.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Literal, Protocol

import msgspec

from events import TrajectorySealed
from replay.training.samples import REGRADED, SampleOptions, SampleSet, Skipped, build_many, outcome_reward


class RolloutDelivery(Protocol):
    """One delivery of a sealed trajectory from the broker."""

    @property
    def event(self) -> TrajectorySealed: ...

    @property
    def seq(self) -> int:
        """Stream sequence of the message."""
        ...

    async def ack(self) -> None: ...

    async def nak(self) -> None: ...

    async def in_progress(self) -> None: ...


class RolloutSource(Protocol):
    """Where sealed trajectories come from (a durable pull consumer, or a fake)."""

    async def fetch(self, max_messages: int, timeout: float) -> list[RolloutDelivery]:  # the port waits up to timeout
        """Up to ``max_messages`` deliveries; an empty list when none came in ``timeout``."""
        ...


class TrainingCursor(msgspec.Struct, frozen=True, kw_only=True):
    """What the trainer has trained; saved inside its checkpoint, restored on restart."""

    committed: dict[str, int] = msgspec.field(default_factory=dict)
    """Trajectory ``event_id`` -> stream sequence, for every trained trajectory."""
    closed_groups: dict[str, int] = msgspec.field(default_factory=dict)
    """Group id -> highest stream sequence, for every group already trained."""

    def __contains__(self, event_id: object) -> bool:
        return event_id in self.committed

    def including(self, rollouts: list[Rollout]) -> TrainingCursor:
        """This cursor plus ``rollouts``."""
        committed = dict(self.committed)
        closed = dict(self.closed_groups)
        for r in rollouts:
            committed[r.event.event_id] = r.seq
            closed[r.event.group_id] = max(r.seq, closed.get(r.event.group_id, 0))
        return TrainingCursor(committed=committed, closed_groups=closed)

    def pruned(self, ack_floor: int) -> TrainingCursor:
        """Forget entries at or below the consumer's ack floor (never redelivered again)."""
        return TrainingCursor(
            committed={k: v for k, v in self.committed.items() if v > ack_floor},
            closed_groups={k: v for k, v in self.closed_groups.items() if v > ack_floor},
        )

    def encode(self) -> bytes:
        return msgspec.json.encode(self)

    @classmethod
    def decode(cls, data: bytes) -> TrainingCursor:
        return msgspec.json.decode(data, type=cls)


class SubscriptionOptions(msgspec.Struct, frozen=True, kw_only=True):
    """Grouping, batching and timing of a subscription."""

    group_size: int
    """Trajectories per GRPO group (the rollout ``n``)."""
    groups_per_batch: int = 1
    fetch_size: int = 256
    fetch_timeout: float = 1.0
    group_timeout: float | None = None
    """Seconds an incomplete group may wait (from its first member); ``None`` waits forever."""
    partial_groups: Literal["yield", "skip"] = "skip"
    """What happens to a group at ``group_timeout``."""
    batch_timeout: float | None = None
    """Yield fewer than ``groups_per_batch`` complete groups after this many seconds."""
    idle_timeout: float | None = None
    """End the iteration after this long without deliveries (``None``: follow forever)."""
    heartbeat_interval: float = 10.0
    """Seconds between ``in_progress`` calls on held deliveries (keep below ``ack_wait``)."""
    reward_source: str = "ground_truth"
    """Outcome reward of ``TrainingBatch.samples``: one of ``REWARD_SOURCES``."""
    roles: tuple[str, ...] | None = None
    """Train only trajectories of these roles (evolve runs seal ``policy`` and ``verifier``
    ones); others are acknowledged and recorded as skipped. ``None`` trains every role."""
    max_staleness: int | None = None
    """Discard a group whose oldest trajectory is more than this many policy versions behind
    the trainer's when its batch is taken (``0``: strictly on-policy); ``None``: no bound."""
    allow_unversioned: bool = True
    """Train trajectories that carry no numeric policy version; off, they are discarded."""

    def __post_init__(self) -> None:
        if self.group_size < 1 or self.groups_per_batch < 1 or self.fetch_size < 1:
            msg = "group_size, groups_per_batch and fetch_size must be >= 1"
            raise ValueError(msg)
        if self.max_staleness is not None and (isinstance(self.max_staleness, bool) or self.max_staleness < 0):
            msg = f"max_staleness must be a whole number of versions >= 0, not {self.max_staleness!r}"
            raise ValueError(msg)
        if self.reward_source == REGRADED:
            msg = ("reward source 'regraded' is for exports (`apollo export --reward-source regraded`): "
                   "rollouts on the live stream have not been regraded")
            raise ValueError(msg)
        SampleOptions(reward_source=self.reward_source)  # refuses an unknown source


class Rollout(msgspec.Struct, frozen=True, kw_only=True):
    """A trajectory in a batch with its stream position and staleness."""

    event: TrajectorySealed
    seq: int
    staleness: int | None
    """Trainer policy version at yield time minus the trajectory's (``None``: unknown)."""


class RolloutGroup(msgspec.Struct, frozen=True, kw_only=True):
    """All trajectories of one group id (fewer than ``expected`` when ``partial``)."""

    group_id: str
    rollouts: list[Rollout]
    expected: int
    partial: bool = False


class SubscriptionStats(msgspec.Struct, kw_only=True):
    """Counters a trainer can log."""

    delivered: int = 0
    duplicates_dropped: int = 0
    redeliveries_merged: int = 0
    batches: int = 0
    heartbeats: int = 0
    heartbeat_failures: int = 0
    ack_failures: int = 0
    discarded_stale: int = 0
    discarded_unversioned: int = 0
    discard_record_failures: int = 0
    """Discards whose ``on_discard`` failed: handed back for redelivery, not acknowledged."""
    train_record_failures: int = 0
    """Commits whose ``on_commit`` failed: nothing acknowledged, the commit may be retried."""


class Discarded(msgspec.Struct, frozen=True, kw_only=True):
    """A trajectory acknowledged without training because of its policy version."""

    event: TrajectorySealed
    reason: str
    version: int | None
    """Its oldest policy version (``None``: unversioned)."""
    trainer_version: int | None


DiscardRecorder = Callable[[list[Discarded]], Awaitable[None]]


class Trained(msgspec.Struct, frozen=True, kw_only=True):
    """A trajectory of a committed batch: what the trainer trained, when, and what it paid."""

    event: TrajectorySealed
    step: int
    """The trainer's step (the batch number when the trainer named none)."""
    version: int | None
    """Its oldest policy version (``None``: unversioned)."""
    trainer_version: int | None
    """The trainer's policy version when the batch was taken."""
    reward: float | None
    """The outcome reward it was trained with (``None``: its source had none)."""
    reward_source: str


TrainRecorder = Callable[[list[Trained]], Awaitable[None]]


class _Pending:
    """A group being assembled: sample index -> (trajectory, handles to ack)."""

    def __init__(self, first_seen: float) -> None:
        self.first_seen = first_seen
        self.members: dict[int, tuple[RolloutDelivery, list[RolloutDelivery]]] = {}

    def handles(self) -> list[RolloutDelivery]:
        return [h for _, hs in self.members.values() for h in hs]


class TrainingBatch:
    """Complete groups for one training step; acknowledged by ``commit()``."""

    def __init__(
        self,
        sub: RolloutSubscription,
        number: int,
        groups: list[RolloutGroup],
        handles: list[RolloutDelivery],
        policy_version: int | None,
    ) -> None:
        self._sub = sub
        self.number = number
        self.groups = groups
        self.policy_version = policy_version
        self._handles = handles
        self.committed = False

    @property
    def rollouts(self) -> list[Rollout]:
        return [r for g in self.groups for r in g.rollouts]

    @property
    def trajectories(self) -> list[TrajectorySealed]:
        return [r.event for r in self.rollouts]

    @property
    def cursor(self) -> TrainingCursor:
        """The cursor to store in the checkpoint saved after training this batch.

        It covers every batch yielded up to this one, because a trainer trains them in
        the order they are yielded.
        """
        return self._sub.cursor_through(self.number)

    def samples(self, layout: str, options: SampleOptions | None = None) -> SampleSet:
        """Training samples of this batch (failed trajectories come back as skipped); without
        ``options``, rewards come from the subscription's ``reward_source``."""
        opts = options or SampleOptions(reward_source=self._sub.options.reward_source)
        return build_many(self.trajectories, layout, opts)

    def staleness_of(self) -> dict[str, int | None]:
        """Trajectory event id -> staleness."""
        return {r.event.event_id: r.staleness for r in self.rollouts}

    async def commit(self, *, step: int | None = None) -> None:
        """Acknowledge the batch; call only after the checkpoint holding ``cursor`` is saved.

        ``step`` is the trainer's step that trained it (recorded by ``on_commit``; the batch
        number when ``None``). When ``on_commit`` raises, nothing is acknowledged and the
        error propagates; calling again retries.
        """
        if not self.committed:
            await self._sub._commit(self, self.number if step is None else step)
            self.committed = True

    def __len__(self) -> int:
        return len(self.rollouts)

    def __repr__(self) -> str:
        return (
            f"TrainingBatch(number={self.number}, groups={len(self.groups)}, rollouts={len(self)})"
        )


class RolloutSubscription:
    """An async iterator of ``TrainingBatch`` over a ``RolloutSource``.

    A trainer trains batches in the order they come and, for each, saves a checkpoint
    with ``batch.cursor`` and then awaits ``batch.commit()``. On restart it passes the
    restored cursor back in. Run long training steps off the event loop
    (``asyncio.to_thread``) so heartbeats keep flowing.
    """

    def __init__(
        self,
        source: RolloutSource,
        options: SubscriptionOptions,
        *,
        cursor: TrainingCursor | None = None,
        policy_version: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        on_discard: DiscardRecorder | None = None,
        on_commit: TrainRecorder | None = None,
    ) -> None:
        self.source = source
        self.options = options
        self.policy_version = policy_version
        """The trainer's current policy version; set it after each weight update."""
        self.on_discard = on_discard
        """Records trajectories discarded for their version (before they are acknowledged)."""
        self.on_commit = on_commit
        """Records the trajectories of a committed batch (before they are acknowledged)."""
        self._discarded_groups: set[str] = set()
        self.skipped: list[Skipped] = []
        self.stats = SubscriptionStats()
        self._cursor = cursor or TrainingCursor()
        self._clock = clock
        self._pending: dict[str, _Pending] = {}
        self._ready: list[RolloutGroup] = []
        self._ready_handles: dict[str, list[RolloutDelivery]] = {}
        self._ready_since: float | None = None
        self._yielded: dict[int, TrainingBatch] = {}
        self._in_flight: dict[str, TrainingBatch] = {}
        self._last_delivery = clock()
        self._last_heartbeat = clock()
        self._heartbeat_task: asyncio.Task[None] | None = None
        self._batches = 0
        self._closed = False

    @property
    def cursor(self) -> TrainingCursor:
        """Everything committed so far."""
        return self._cursor

    def cursor_through(self, number: int) -> TrainingCursor:
        """Committed trajectories plus those of every batch yielded up to ``number``."""
        rollouts = [r for n, b in sorted(self._yielded.items()) if n <= number for r in b.rollouts]
        return self._cursor.including(rollouts)

    def __aiter__(self) -> AsyncIterator[TrainingBatch]:
        return self

    async def __anext__(self) -> TrainingBatch:
        if self._closed:
            raise StopAsyncIteration
        self._start_heartbeats()
        while True:
            await self._expire_groups()
            await self._discard_stale()
            batch = self._take_batch()
            if batch is not None:
                return batch
            deliveries = await self.source.fetch(
                self.options.fetch_size, self.options.fetch_timeout
            )
            for d in deliveries:
                await self._accept(d)
            if deliveries:
                self._last_delivery = self._clock()
            elif self._idle():
                await self._discard_stale()
                batch = self._take_batch(flush=True)
                if batch is not None:
                    return batch
                raise StopAsyncIteration
            await self.heartbeat(force=False)

    async def aclose(self) -> None:
        """Stop: heartbeats end and every uncommitted delivery is nak'ed for redelivery."""
        self._closed = True
        if self._heartbeat_task is not None:
            self._heartbeat_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat_task
        for handle in self._held():
            with contextlib.suppress(Exception):  # closing on a dead connection is fine
                await handle.nak()

    async def heartbeat(self, *, force: bool = True) -> None:
        """``in_progress`` on every held delivery (waiting groups and uncommitted batches)."""
        now = self._clock()
        if not force and now - self._last_heartbeat < self.options.heartbeat_interval:
            return
        self._last_heartbeat = now
        for handle in self._held():
            try:
                await handle.in_progress()
                self.stats.heartbeats += 1
            except Exception:  # noqa: BLE001 - a lost heartbeat only risks a redelivery; counted
                self.stats.heartbeat_failures += 1

    # -- internals -------------------------------------------------------------------

    def _held(self) -> list[RolloutDelivery]:
        held = [h for p in self._pending.values() for h in p.handles()]
        held += [h for hs in self._ready_handles.values() for h in hs]
        held += [h for b in self._yielded.values() if not b.committed for h in b._handles]
        return held

    def _start_heartbeats(self) -> None:
        if self._heartbeat_task is None and self.options.heartbeat_interval > 0:
            self._heartbeat_task = asyncio.get_running_loop().create_task(self._beat())

    async def _beat(self) -> None:
        while not self._closed:
            await asyncio.sleep(self.options.heartbeat_interval)
            await self.heartbeat(force=False)

    def _idle(self) -> bool:
        limit = self.options.idle_timeout
        return limit is not None and self._clock() - self._last_delivery >= limit

    async def _accept(self, d: RolloutDelivery) -> None:
        self.stats.delivered += 1
        event: Any = d.event
        if not isinstance(event, TrajectorySealed):
            await self._drop(d, None, f"not a trajectory.sealed event ({type(event).__name__})")
            return
        roles = self.options.roles
        if roles is not None and event.role not in roles:
            await self._drop(d, event, f"role {event.role} is not trained by this subscription")
            return
        if not self.options.allow_unversioned and version_of(event) is None:
            await self._discard([event], [d], "no numeric policy version (unversioned rollouts are not allowed)",
                                unversioned=True)
            return
        eid = event.event_id
        if eid in self._cursor:
            self.stats.duplicates_dropped += 1
            await self._ack(d)
            return
        if eid in self._in_flight:
            self._in_flight[eid]._handles.append(d)
            self.stats.redeliveries_merged += 1
            return
        if event.group_id in self._cursor.closed_groups or self._group_yielded(event.group_id):
            await self._drop(d, event, "arrived after its group was trained")
            return
        if event.group_id in self._discarded_groups:
            await self._drop(d, event, "arrived after its group was discarded as stale")
            return
        if event.group_id in self._ready_handles:
            await self._merge_ready(d, event)
            return
        self._add_pending(d, event)

    def _group_yielded(self, group_id: str) -> bool:
        return any(g.group_id == group_id for b in self._yielded.values() for g in b.groups)

    async def _merge_ready(self, d: RolloutDelivery, event: TrajectorySealed) -> None:
        group = next(g for g in self._ready if g.group_id == event.group_id)
        if any(r.event.event_id == event.event_id for r in group.rollouts):
            self._ready_handles[event.group_id].append(d)
            self.stats.redeliveries_merged += 1
        else:
            await self._drop(d, event, "group already complete")

    def _add_pending(self, d: RolloutDelivery, event: TrajectorySealed) -> None:
        pending = self._pending.get(event.group_id)
        if pending is None:
            pending = self._pending[event.group_id] = _Pending(self._clock())
        slot = pending.members.get(event.sample_index)
        if slot is not None:
            kept, handles = slot
            handles.append(d)
            if kept.event.event_id == event.event_id:
                self.stats.redeliveries_merged += 1
            else:
                # Another trajectory for the same slot: keep the first, ack both together.
                self.skipped.append(_skip(event, "duplicate sample_index in group"))
            return
        pending.members[event.sample_index] = (d, [d])
        if len(pending.members) >= self.options.group_size:
            self._make_ready(event.group_id, partial=False)

    def _make_ready(self, group_id: str, *, partial: bool) -> None:
        pending = self._pending.pop(group_id)
        rollouts = [
            Rollout(event=d.event, seq=d.seq, staleness=self._staleness(d.event))
            for _, (d, _) in sorted(pending.members.items())
        ]
        self._ready.append(
            RolloutGroup(
                group_id=group_id,
                rollouts=rollouts,
                expected=self.options.group_size,
                partial=partial,
            )
        )
        self._ready_handles[group_id] = pending.handles()
        if self._ready_since is None:
            self._ready_since = self._clock()

    def _staleness(self, event: TrajectorySealed) -> int | None:
        version = version_of(event)
        if self.policy_version is None or version is None:
            return None
        return self.policy_version - version

    async def _discard_stale(self) -> None:
        """Discard ready groups now too far behind the trainer's version (whole groups)."""
        limit = self.options.max_staleness
        if limit is None or self.policy_version is None:
            return
        for group in list(self._ready):
            worst = max((s for r in group.rollouts if (s := self._staleness(r.event)) is not None), default=None)
            if worst is None or worst <= limit:
                continue
            self._ready.remove(group)
            self._discarded_groups.add(group.group_id)
            handles = self._ready_handles.pop(group.group_id)
            oldest = min(v for r in group.rollouts if (v := version_of(r.event)) is not None)
            reason = (f"stale: policy version {oldest} is {worst} versions behind the trainer's "
                      f"{self.policy_version} (max_staleness {limit})")
            await self._discard([r.event for r in group.rollouts], handles, reason)
        if not self._ready:
            self._ready_since = None

    async def _discard(
        self, events: list[TrajectorySealed], handles: list[RolloutDelivery], reason: str, *,
        unversioned: bool = False,
    ) -> None:
        """Record, then acknowledge; a failed record hands the deliveries back instead."""
        records = [
            Discarded(event=e, reason=reason, version=version_of(e), trainer_version=self.policy_version)
            for e in events
        ]
        if self.on_discard is not None:
            try:
                await self.on_discard(records)
            except Exception:
                # Never ack what was not recorded: hand it back and let the trainer see why.
                self.stats.discard_record_failures += len(records)
                for handle in handles:
                    with contextlib.suppress(Exception):
                        await handle.nak()
                raise
        for record in records:
            self.skipped.append(_skip(record.event, reason))
        if unversioned:
            self.stats.discarded_unversioned += len(records)
        else:
            self.stats.discarded_stale += len(records)
        for handle in handles:
            await self._ack(handle)

    async def _expire_groups(self) -> None:
        limit = self.options.group_timeout
        if limit is None:
            return
        now = self._clock()
        for group_id, pending in list(self._pending.items()):
            if now - pending.first_seen < limit:
                continue
            if self.options.partial_groups == "yield":
                self._make_ready(group_id, partial=True)
                continue
            del self._pending[group_id]
            have = len(pending.members)
            reason = f"group incomplete after {limit}s ({have}/{self.options.group_size})"
            for d, _ in pending.members.values():
                self.skipped.append(_skip(d.event, reason))
            for handle in pending.handles():
                await self._ack(handle)

    def _take_batch(self, *, flush: bool = False) -> TrainingBatch | None:
        want = self.options.groups_per_batch
        waited = (
            self._ready_since is not None
            and self.options.batch_timeout is not None
            and (self._clock() - self._ready_since >= self.options.batch_timeout)
        )
        if not self._ready or (len(self._ready) < want and not (flush or waited)):
            return None
        groups, self._ready = self._ready[:want], self._ready[want:]
        groups = [self._restamped(g) for g in groups]  # staleness as of now, not of when it completed
        handles = [h for g in groups for h in self._ready_handles.pop(g.group_id)]
        self._ready_since = self._clock() if self._ready else None
        self._batches += 1
        self.stats.batches += 1
        batch = TrainingBatch(self, self._batches, groups, handles, self.policy_version)
        self._yielded[batch.number] = batch
        for r in batch.rollouts:
            self._in_flight[r.event.event_id] = batch
        return batch

    def _restamped(self, group: RolloutGroup) -> RolloutGroup:
        rollouts = [msgspec.structs.replace(r, staleness=self._staleness(r.event)) for r in group.rollouts]
        return msgspec.structs.replace(group, rollouts=rollouts)

    async def _commit(self, batch: TrainingBatch, step: int) -> None:
        if self.on_commit is not None:
            source = self.options.reward_source
            trained = [Trained(event=r.event, step=step, version=version_of(r.event),
                               trainer_version=batch.policy_version, reward=outcome_reward(r.event, source),
                               reward_source=source)
                       for r in batch.rollouts]
            try:
                await self.on_commit(trained)
            except Exception:
                self.stats.train_record_failures += len(trained)
                raise  # never acknowledge what was not recorded
        self._cursor = self._cursor.including(batch.rollouts)
        del self._yielded[batch.number]
        for r in batch.rollouts:
            self._in_flight.pop(r.event.event_id, None)
        for handle in batch._handles:
            await self._ack(handle)

    async def _ack(self, handle: RolloutDelivery) -> None:
        try:
            await handle.ack()
        except Exception:  # noqa: BLE001 - an unacknowledged rollout is redelivered; counted
            self.stats.ack_failures += 1

    async def _drop(self, d: RolloutDelivery, event: TrajectorySealed | None, reason: str) -> None:
        if event is not None:
            self.skipped.append(_skip(event, reason))
        else:
            self.skipped.append(Skipped(traj_uid="", run_id="", group_id="", reason=reason))
        await self._ack(d)


def version_of(event: TrajectorySealed) -> int | None:
    """A trajectory's policy version as a number: its oldest turn's, else its recorded text's."""
    if event.policy_versions:
        return min(event.policy_versions)
    if event.policy_version is None:
        return None
    try:
        return int(event.policy_version)
    except ValueError:
        return None


def _skip(event: TrajectorySealed, reason: str) -> Skipped:
    return Skipped(
        traj_uid=event.event_id, run_id=event.run_id, group_id=event.group_id, reason=reason
    )
