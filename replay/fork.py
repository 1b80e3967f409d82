"""Plan a fork: a new run whose history is a parent's prefix, continuing live from there.

The fork's events must look exactly as if the engine had produced them in the new run,
or the dispatcher would not recognise them as already handled. So every copied event
gets the id the engine would have derived for it there: ``derive_id(new cause id,
handler, label)``. Effector outputs carry the label ``result``; the labels of decider
outputs (and of the ids deciders mint, such as call ids) are recovered by re-running
the deciders over the parent's history with a context that records them.

What is copied, and how the fork continues:

* Every parent event with sequence <= ``at_seq`` is copied, except *pending requests*:
  an event whose effector result lies after ``at_seq`` (a model call still waiting for
  its reply, say). Its decider asks for it again in the fork, under the fork's settings,
  so the request names the new model.
* The fork's ``RunStarted`` records the parent's settings with the overrides laid over
  (e.g. a new policy model); the ``ProblemSubmitted`` carries ``parent_run_id``,
  ``fork_seq`` and the overrides in ``config`` (used if ``RunStarted`` is not copied).
* Copied events whose handling was complete in the parent are marked handled before
  they are appended, so the dispatcher skips them. The others (the *frontier*: events
  with outputs after ``at_seq`` or none at all) are routed again, which is what makes
  the new run continue. Outputs a frontier decider re-emits that were already copied
  have the same ids and are deduplicated by the log.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from events.base import Event
from events.codec import from_builtins, to_builtins
from events.record import Recorded
from events.run import ProblemSubmitted, RunStarted
from handlers.catalog import Catalog, builtin_catalog
from handlers.context import HandlerContext, Services, derive_id
from handlers.routes import ROUTES, Route, routes_for
from replay.errors import ForkError
from replay.verify import DISPATCHER_LABELS, require_extensions

Origin = tuple[str, str]
"""(handler, label) an event id was derived from."""


@dataclass(frozen=True)
class ForkPlan:
    """Everything needed to create the fork; ``engine`` appends and marks it."""

    parent_run_id: str
    run_id: str
    fork_seq: int
    events: list[Event]
    """To append in order; the first is the fork's ``ProblemSubmitted``."""
    handled: list[tuple[str, str]]
    """(route name, event id) pairs to mark handled before appending."""
    frontier: list[str]
    """Ids of copied events the dispatcher will route again (where the run continues)."""
    dropped: list[int]
    """Parent sequences of pending requests that are asked for again instead of copied."""


@dataclass(frozen=True)
class _RecordingContext(HandlerContext):
    """A handler context that notes the label of every id it derives."""

    journal: list[tuple[str, str, str]] = field(default_factory=list)

    def new(self, event_type: Any, label: str, **fields: Any) -> Any:
        event = super().new(event_type, label, **fields)
        self.journal.append(("event", label, event.event_id))
        return event

    def new_id(self, label: str) -> str:
        value = super().new_id(label)
        self.journal.append(("id", label, value))
        return value


async def plan_fork(
    parent: Sequence[Recorded],
    *,
    run_id: str,
    at_seq: int,
    overrides: Mapping[str, Any] | None = None,
    routes: Sequence[Route] = ROUTES,
    catalog: Catalog | None = None,
    submitted_at: datetime | None = None,
) -> ForkPlan:
    """Work out the events and bookkeeping of a fork of ``parent`` after ``at_seq``.

    ``submitted_at`` is when the fork is made: its submission's time (the copied events
    keep theirs), so `apollo runs` lists the fork when it began, not when its parent did.

    Raises:
        ForkError: the parent is empty, has no submission, or ``at_seq`` precedes it.
        handlers.catalog.ExtensionMissing: the parent names a plugin extension ``catalog`` lacks.
    """
    records = sorted(parent, key=lambda r: r.seq)
    root = _root(records, at_seq)
    overrides = dict(overrides or {})
    pending = _pending(records, at_seq, routes)
    copied = [r for r in records if r.seq <= at_seq and r.seq not in pending]
    prefix = [r for r in records if r.seq <= at_seq]
    services = Services(catalog=catalog or builtin_catalog())
    require_extensions(prefix, services.catalog)  # ids are learnt by re-deciding the prefix
    origins, minted = await _origins(prefix, routes, services)
    ids: dict[str, str] = {root.event.event_id: run_id}
    values: dict[str, str] = {}
    for record in copied[1:]:
        ids[record.event.event_id] = _new_id(record.event, origins, ids, run_id)
    for (cause, handler, label), old in minted.items():
        if cause in ids:
            values[old] = derive_id(ids[cause], handler, f"id:{label}")
    rename = {**values, **ids}
    caused = _caused(records)
    copied_ids = {r.event.event_id for r in copied}
    frontier = [r for r in copied if _is_frontier(r, caused, copied_ids, routes)]
    frontier_ids = {r.event.event_id for r in frontier}
    events = [_fork_root(root, run_id, at_seq, overrides, last=copied[-1], ids=ids, submitted_at=submitted_at)]
    events.extend(_rewrite(r.event, run_id, rename, overrides) for r in copied[1:])
    handled = [(route.name, ids[r.event.event_id]) for r in copied if r.event.event_id not in frontier_ids
               for route in routes_for(routes, type(r.event))]
    return ForkPlan(root.event.run_id, run_id, at_seq, events, handled,
                    [ids[i] for i in frontier_ids if i in ids], sorted(pending))


def _root(records: list[Recorded], at_seq: int) -> Recorded:
    if not records:
        msg = "the parent run has no recorded events"
        raise ForkError(msg)
    root = records[0]
    if not isinstance(root.event, ProblemSubmitted):
        msg = f"run {root.event.run_id} does not start with a problem submission"
        raise ForkError(msg)
    if at_seq < root.seq:
        msg = f"--at {at_seq} is before the run's first event (seq {root.seq})"
        raise ForkError(msg)
    return root


def _pending(records: list[Recorded], at_seq: int, routes: Sequence[Route]) -> set[int]:
    """Requests answered by an effector only after ``at_seq`` (never the submission)."""
    seq_of = {r.event.event_id: r.seq for r in records}
    pending = set()
    for record in records[1:]:
        if record.seq > at_seq:
            break
        results = [derive_id(record.event.event_id, route.name, "result")
                   for route in routes_for(routes, type(record.event)) if route.kind == "effect"]
        if any(seq_of.get(result, 0) > at_seq for result in results):
            pending.add(record.seq)
    return pending


async def _origins(
    records: list[Recorded], routes: Sequence[Route], services: Services
) -> tuple[dict[str, Origin], dict[tuple[str, str, str], str]]:
    """(handler, label) of every derived event id, and the ids deciders minted per cause."""
    origins: dict[str, Origin] = {}
    minted: dict[tuple[str, str, str], str] = {}
    events = [r.event for r in records]
    for index, event in enumerate(events):
        for route in routes_for(routes, type(event)):
            if route.kind == "effect":
                origins[derive_id(event.event_id, route.name, "result")] = (route.name, "result")
                continue
            ctx = _RecordingContext(event=event, handler=route.name, history=events[: index + 1],
                                    services=services)
            try:
                await route.handler(event, ctx)
            except Exception:  # noqa: BLE001 - a decider that no longer runs keeps fallback ids
                continue
            for kind, label, value in ctx.journal:
                if kind == "event":
                    origins[value] = (route.name, label)
                else:
                    minted[(event.event_id, route.name, label)] = value
        for label in DISPATCHER_LABELS:
            origins[derive_id(event.event_id, "dispatcher", label)] = ("dispatcher", label)
    return origins, minted


def _new_id(event: Event, origins: Mapping[str, Origin], ids: Mapping[str, str], run_id: str) -> str:
    origin = origins.get(event.event_id)
    cause = ids.get(event.causation_id or "")
    if origin is not None and cause is not None:
        return derive_id(cause, *origin)
    return derive_id(event.event_id, "fork", run_id)


def _caused(records: list[Recorded]) -> dict[str, set[str]]:
    caused: dict[str, set[str]] = {}
    for record in records:
        if record.event.causation_id is not None:
            caused.setdefault(record.event.causation_id, set()).add(record.event.event_id)
    return caused


def _is_frontier(record: Recorded, caused: Mapping[str, set[str]], copied: set[str],
                 routes: Sequence[Route]) -> bool:
    if not routes_for(routes, type(record.event)):
        return False
    outputs = caused.get(record.event.event_id, set())
    return not outputs or not outputs <= copied


def _fork_root(root: Recorded, run_id: str, at_seq: int, overrides: dict[str, Any], *, last: Recorded,
               ids: Mapping[str, str], submitted_at: datetime | None) -> ProblemSubmitted:
    event = root.event
    assert isinstance(event, ProblemSubmitted)  # checked by _root
    fork = {"parent_run_id": event.run_id, "fork_seq": at_seq,
            "last_copied_id": ids.get(last.event.event_id, run_id), "overrides": overrides}
    data = to_builtins(event)
    data.update(event_id=run_id, run_id=run_id, correlation_id=None, causation_id=None,
                parent_run_id=event.run_id, fork_seq=at_seq,
                config=merge(event.config, overrides), metadata={**event.metadata, "fork": fork})
    if submitted_at is not None:
        data["occurred_at"] = submitted_at.isoformat()
    return _typed(data)


def _rewrite(event: Event, run_id: str, rename: Mapping[str, str], overrides: Mapping[str, Any]) -> Event:
    data = _renamed(to_builtins(event), rename)
    data["run_id"] = run_id
    if isinstance(event, RunStarted):
        data["settings"] = merge(event.settings, overrides)
    return _typed(data)


def _renamed(value: Any, rename: Mapping[str, str]) -> Any:
    """Replace every string that is an old id (event ids, call ids) by its fork id."""
    if isinstance(value, str):
        return rename.get(value, value)
    if isinstance(value, dict):
        return {key: _renamed(item, rename) for key, item in value.items()}
    if isinstance(value, list):
        return [_renamed(item, rename) for item in value]
    return value


def _typed(data: dict[str, Any]) -> Any:
    event = from_builtins(data)
    if not isinstance(event, Event):
        msg = f"cannot copy an event of unknown type {data.get('type')!r}"
        raise ForkError(msg)
    return event


def merge(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``extra`` laid over ``base``, nested mappings merged key by key."""
    merged = dict(base)
    for key, value in extra.items():
        current = merged.get(key)
        merged[key] = merge(current, value) if isinstance(value, Mapping) and isinstance(current, Mapping) else value
    return merged
