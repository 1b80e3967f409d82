"""Rebuild projections from the log, and compare them with live checkpoints.

The live projector (``engine/runtime/projector.py``) and this module call the same folds and
the same checkpoint codec, so "live equals rebuilt" is a byte comparison.
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import msgspec

from events.base import Event
from events.record import Recorded
from handlers.projections.registry import Projection, projections
from replay.diff import field_differences
from replay.errors import CheckpointUnusable


class Checkpoint(msgspec.Struct, frozen=True, kw_only=True):
    """One projection's state of one run and the last stream sequence folded into it.

    State and sequence are one value, so a checkpoint can never drift from its state.
    """

    run_id: str
    projection: str
    last_seq: int
    state: msgspec.Raw


_checkpoint_decoder = msgspec.json.Decoder(Checkpoint)


def checkpoint_key(projection: str, run_id: str) -> str:
    """KV key of a run's checkpoint (run ids are subject tokens, so the key is valid)."""
    return f"projection.{projection}.{run_id}"


def state_bytes(state: Any) -> bytes:
    """The canonical encoding of a projection state (what checkpoints store)."""
    return msgspec.json.encode(state)


def encode_checkpoint(run_id: str, projection: str, state: Any, last_seq: int) -> bytes:
    raw = msgspec.Raw(state_bytes(state))
    return msgspec.json.encode(Checkpoint(run_id=run_id, projection=projection, last_seq=last_seq, state=raw))


def decode_checkpoint(data: bytes) -> Checkpoint:
    """Raises msgspec.DecodeError on bytes that are not a checkpoint."""
    return _checkpoint_decoder.decode(data)


def load_state(checkpoint: Checkpoint, projection: Projection) -> Any:
    """The typed state of a checkpoint (to resume folding from it).

    Raises:
        CheckpointUnusable: the bytes do not decode into the projection's state type, or
            that type is one msgspec cannot decode (then the run is rebuilt from the log).
    """
    data = bytes(checkpoint.state)
    try:
        if projection.decode is not None:
            return projection.decode(data)
        return msgspec.json.decode(data, type=projection.state_type)
    except (TypeError, ValueError, msgspec.DecodeError) as exc:
        msg = f"checkpoint of {projection.name!r} cannot be restored: {exc}"
        raise CheckpointUnusable(msg) from exc


def fold(projection: Projection, events: Iterable[Event], state: Any = None) -> Any:
    """Fold ``events`` into ``state`` (or into the projection's initial state)."""
    current = projection.initial() if state is None else state
    evolve = projection.evolve
    for event in events:
        current = evolve(current, event)
    return current


def rebuild_run(
    records: Iterable[Recorded],
    *,
    upto_seq: int | None = None,
    registry: Mapping[str, Projection] | None = None,
) -> dict[str, Any]:
    """Every projection of one run, folded from its first event (up to ``upto_seq``)."""
    chosen = registry if registry is not None else projections()
    events = [r.event for r in records if upto_seq is None or r.seq <= upto_seq]
    return {name: fold(projection, events) for name, projection in chosen.items()}


YOUNG_COLLECTION_EVERY = 65_536
"""Events between collections of the youngest generation while the GC is paused."""


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for a bulk fold.

    Folds build immutable, acyclic states, so reference counting frees everything they
    drop; but a rebuild allocates millions of objects, and each allocation burst would
    trigger collections that walk every state built so far (cost grows with the log).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


async def rebuild_stream(
    records: AsyncIterable[Recorded], registry: Mapping[str, Projection] | None = None
) -> dict[str, dict[str, Any]]:
    """Every projection of every run in one ordered pass (e.g. over ``EventLog.read_all``).

    Returns ``{run_id: {projection: state}}``, the same states :func:`rebuild_run` gives
    per run.
    """
    chosen = list((registry if registry is not None else projections()).items())
    folds_by_type: dict[type, list[tuple[int, Any]]] = {}
    states: dict[str, list[Any]] = {}
    with gc_paused():
        until_collection = YOUNG_COLLECTION_EVERY
        async for record in records:
            until_collection -= 1
            if not until_collection:
                until_collection = YOUNG_COLLECTION_EVERY
                gc.collect(0)  # reclaim any fresh cycles (from the reader, say) now and then
            event = record.event
            run = states.get(event.run_id)
            if run is None:
                run = states[event.run_id] = [projection.initial() for _, projection in chosen]
            folds = folds_by_type.get(type(event))
            if folds is None:  # which projections fold this type: asked once per type
                folds = folds_by_type[type(event)] = [
                    (index, projection.evolve) for index, (_, projection) in enumerate(chosen)
                    if projection.folds(type(event))
                ]
            for index, evolve in folds:
                run[index] = evolve(run[index], event)
    names = [name for name, _ in chosen]
    return {run_id: dict(zip(names, run, strict=True)) for run_id, run in states.items()}


@dataclass(frozen=True)
class ProjectionCheck:
    """How one projection's live checkpoint compares with a rebuild of the same prefix."""

    projection: str
    live_seq: int | None
    """Last sequence of the checkpoint; ``None`` when there is no checkpoint."""
    ok: bool
    differences: tuple[str, ...] = ()


def check_against_checkpoint(
    records: list[Recorded], projection: Projection, data: bytes | None
) -> ProjectionCheck:
    """Rebuild up to the checkpoint's sequence and compare states byte for byte."""
    if data is None:
        return ProjectionCheck(projection.name, None, ok=True)
    try:
        checkpoint = decode_checkpoint(data)
    except msgspec.DecodeError as exc:
        return ProjectionCheck(projection.name, -1, ok=False, differences=(f"unreadable checkpoint: {exc}",))
    rebuilt = fold(projection, (r.event for r in records if r.seq <= checkpoint.last_seq))
    live = bytes(checkpoint.state)
    if state_bytes(rebuilt) == live:
        return ProjectionCheck(projection.name, checkpoint.last_seq, ok=True)
    diffs = field_differences(msgspec.json.decode(live), msgspec.to_builtins(rebuilt), "state")
    return ProjectionCheck(projection.name, checkpoint.last_seq, ok=False, differences=tuple(diffs))
