"""Determinism verification: re-run the deciders over a recorded history.

Shaped like Temporal's replayer: :func:`verify_run` takes one run's history and returns a
:class:`ReplayResult`; :func:`verify_runs` does many. For every recorded event ``E``
the deciders routed to ``type(E)`` get exactly what the dispatcher gave them live: the
run's events with stream sequence <= ``E.seq``. Each event they emit must already be in
the log with identical bytes (``events.encode``); a recorded event caused by ``E`` that
no decider (and no effector or dispatcher) of ``E`` accounts for is reported too.
Effectors are never run: their outputs are simply part of the recorded history, so
verification makes no model or tool call.

Deciders get the ``catalog`` given (the built-ins by default; ``apollo replay`` passes the
loaded plugins'). A run recorded with a domain, grader or reward the catalog lacks is not
re-decided at all: :class:`handlers.catalog.ExtensionMissing` names the missing entry.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import msgspec

from events.base import Event, tag_of
from events.codec import encode, to_builtins
from events.model import ModelCallRequested
from events.record import Recorded
from events.run import ProblemSubmitted, RunStarted
from handlers.catalog import Catalog, builtin_catalog
from handlers.context import HandlerContext, Services, derive_id
from handlers.lifecycle import run_cancelled
from handlers.routes import ROUTES, Route, routes_for
from handlers.run_settings import RunSettings, run_settings_of
from replay.diff import field_differences
from replay.errors import NondeterminismError

DifferenceKind = Literal["payload", "missing", "unexpected", "crashed"]

DISPATCHER_LABELS = ("handler-failed",)
"""Events the dispatcher itself derives from an input (see engine/runtime/dispatcher.py)."""


@dataclass(frozen=True)
class Difference:
    """The first place where today's deciders disagree with the log."""

    kind: DifferenceKind
    """``payload``: same id, other bytes; ``missing``: emitted now, not in the log;
    ``unexpected``: in the log, no longer emitted; ``crashed``: the decider raised."""
    seq: int
    """Stream sequence of the differing recorded event (of the cause for ``missing``/``crashed``)."""
    cause_seq: int
    cause_tag: str
    handler: str
    event_id: str | None
    tag: str | None
    fields: tuple[str, ...] = ()
    """Field-level lines ``path: recorded != replayed``."""
    n: int = 0
    """The differing event's number in its run (1..n, as `apollo show` numbers it; 0: unknown)."""
    cause_n: int = 0

    def describe(self) -> str:
        at = _place(self.n, self.seq)
        head = {
            "payload": f"{at}: {self.tag} {self.event_id} differs from what {self.handler} emits now",
            "missing": f"{at}: {self.handler} now emits {self.tag} {self.event_id}, which is not in the log",
            "unexpected": f"{at}: recorded {self.tag} {self.event_id} is no longer emitted by {self.handler}",
            "crashed": f"{at}: {self.handler} raised while replaying",
        }[self.kind]
        cause = _place(self.cause_n, self.cause_seq)
        lines = [head, f"  (answering {self.cause_tag} at {cause}; recorded != replayed)"]
        lines.extend(f"  {line}" for line in self.fields)
        return "\n".join(lines)


@dataclass(frozen=True)
class ReplayResult:
    """Outcome of verifying one run."""

    run_id: str
    ok: bool
    events: int
    """Recorded events read."""
    checked: int
    """Decider outputs compared with the log."""
    first_difference: Difference | None = None
    differences: tuple[Difference, ...] = ()


@dataclass
class ReplayResults:
    """Outcome of verifying many runs."""

    results: list[ReplayResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(result.ok for result in self.results)

    @property
    def failures(self) -> dict[str, Difference]:
        return {r.run_id: r.first_difference for r in self.results if r.first_difference is not None}


async def verify_run(
    history: Sequence[Recorded],
    *,
    routes: Sequence[Route] = ROUTES,
    raise_on_failure: bool = False,
    catalog: Catalog | None = None,
) -> ReplayResult:
    """Re-run every decider of one run's history and compare with what was recorded.

    Raises:
        NondeterminismError: only with ``raise_on_failure``, naming the first differing seq.
        handlers.catalog.ExtensionMissing: the run was recorded with a plugin's domain,
            grader or reward that ``catalog`` lacks.
        handlers.run_settings.RunSettingsError: the recorded settings are garbage.
    """
    records = sorted(history, key=lambda r: r.seq)
    run_id = records[0].event.run_id if records else "?"
    services = Services(catalog=catalog or builtin_catalog())
    run = require_extensions(records, services.catalog)  # decoded once: every context carries it
    by_id = {r.event.event_id: r for r in records}
    caused: dict[str, list[Recorded]] = {}
    for record in records:
        if record.event.causation_id is not None:
            caused.setdefault(record.event.causation_id, []).append(record)
    copied = _copied_prefix(records)
    events = [r.event for r in records]
    differences: list[Difference] = []
    checked = 0
    started = False
    for index, record in enumerate(records):
        if run_cancelled((record.event,)):
            break  # workers decide nothing at or after a cancellation (handlers/lifecycle.py)
        started = started or isinstance(record.event, RunStarted)
        deciders = [r for r in routes_for(routes, type(record.event)) if r.kind == "decide"]
        accounted = _effect_ids(record.event, routes)
        for route in deciders:
            outputs, crash = await _run_decider(route, record.event, events[: index + 1], services,
                                                run if started else None)
            if crash is not None:
                differences.append(_difference("crashed", record, record, route, None, (crash,)))
                continue
            for output in outputs:
                accounted.add(output.event_id)
                found = by_id.get(output.event_id)
                if found is not None and found.seq <= copied:
                    continue  # a fork's copied prefix is input, verified in its parent
                checked += 1
                diff = _compare(record, route, output, found)
                if diff is not None:
                    differences.append(diff)
        if deciders:
            differences.extend(_unexpected(record, caused.get(record.event.event_id, []), accounted, copied,
                                           deciders))
    numbers = {record.seq: number for number, record in enumerate(records, 1)}
    differences = [replace(d, n=numbers.get(d.seq, 0), cause_n=numbers.get(d.cause_seq, 0)) for d in differences]
    differences.sort(key=lambda d: (d.seq, d.cause_seq))
    first = differences[0] if differences else None
    result = ReplayResult(run_id, first is None, len(records), checked, first, tuple(differences))
    if raise_on_failure and first is not None:
        raise NondeterminismError(first.describe(), run_id=run_id, seq=first.seq)
    return result


async def verify_runs(
    histories: Iterable[Sequence[Recorded]] | AsyncIterable[Sequence[Recorded]],
    *,
    routes: Sequence[Route] = ROUTES,
    catalog: Catalog | None = None,
) -> ReplayResults:
    """Verify several runs; never raises for a difference (see ``failures``), only for a
    run that names an extension ``catalog`` lacks (see :func:`verify_run`)."""
    results = ReplayResults()
    if isinstance(histories, AsyncIterable):
        async for history in histories:
            results.results.append(await verify_run(history, routes=routes, catalog=catalog))
    else:
        for history in histories:
            results.results.append(await verify_run(history, routes=routes, catalog=catalog))
    return results


def require_extensions(records: Sequence[Recorded], catalog: Catalog) -> RunSettings | None:
    """Refuse to re-decide a run whose recorded domain, grader or reward ``catalog`` lacks;
    returns the run's settings, typed (``None``: no ``run.started`` recorded).

    Raises:
        handlers.catalog.ExtensionMissing: naming the run, the entry and its plugin.
    """
    for record in records:
        if isinstance(record.event, RunStarted):
            run = run_settings_of(record.event.settings)
            catalog.require(record.event.run_id, run)
            return run
    return None


async def _run_decider(route: Route, event: Event, history: list[Event], services: Services,
                       settings: RunSettings | None) -> tuple[list[Event], str | None]:
    ctx = HandlerContext(event=event, handler=route.name, history=history, services=services, typed_settings=settings)
    try:
        return list(await route.handler(event, ctx)), None
    except Exception as exc:  # noqa: BLE001 - a crashing decider is a finding, not a crash of replay
        return [], f"{type(exc).__name__}: {exc}"


def _compare(cause: Recorded, route: Route, output: Event, found: Recorded | None) -> Difference | None:
    if found is None:
        return _difference("missing", cause, cause, route, output, ())
    if encode(found.event) == encode(output):
        return None
    fields = field_differences(to_builtins(_as_recorded(found.event)), to_builtins(_as_recorded(output)))
    return _difference("payload", cause, found, route, output, tuple(fields))


def _as_recorded(event: Event) -> Event:
    """A request as the log holds it: with a prompt delta, its messages are not recorded (only compared)."""
    if isinstance(event, ModelCallRequested) and event.prompt_delta is not None and event.messages:
        return msgspec.structs.replace(event, messages=[])
    return event


def _unexpected(
    cause: Recorded, recorded: list[Recorded], accounted: set[str], copied: int, deciders: list[Route]
) -> list[Difference]:
    names = "/".join(route.name for route in deciders)
    return [
        Difference("unexpected", r.seq, cause.seq, tag_of(type(cause.event)), names, r.event.event_id,
                   tag_of(type(r.event)))
        for r in recorded
        if r.event.event_id not in accounted and r.seq > copied
    ]


def _effect_ids(event: Event, routes: Sequence[Route]) -> set[str]:
    """Ids an effector or the dispatcher may have recorded in answer to ``event``."""
    ids = {derive_id(event.event_id, r.name, "result") for r in routes_for(routes, type(event)) if r.kind == "effect"}
    ids.update(derive_id(event.event_id, "dispatcher", label) for label in DISPATCHER_LABELS)
    return ids


def _difference(
    kind: DifferenceKind, cause: Recorded, at: Recorded, route: Route, output: Event | None, fields: tuple[str, ...]
) -> Difference:
    event = output if output is not None else None
    return Difference(
        kind=kind, seq=at.seq, cause_seq=cause.seq, cause_tag=tag_of(type(cause.event)), handler=route.name,
        event_id=event.event_id if event is not None else None,
        tag=tag_of(type(event)) if event is not None else None, fields=fields,
    )


def _place(number: int, seq: int) -> str:
    """``event 7 (seq 1503)``: the run's own numbering first, the stream's beside it."""
    return f"event {number} (seq {seq})" if number else f"seq {seq}"


def _copied_prefix(records: Sequence[Recorded]) -> int:
    """Sequence of the last event a fork copied from its parent (0 for runs that are not forks)."""
    if not records or not isinstance(records[0].event, ProblemSubmitted):
        return 0
    fork: Any = records[0].event.metadata.get("fork")
    if not isinstance(fork, dict):
        return 0
    last = fork.get("last_copied_id")
    return next((r.seq for r in records if r.event.event_id == last), 0)
