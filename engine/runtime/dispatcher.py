"""Routes each delivered event to its handlers, publishes their outputs, then acks.

Exactly-once recipe: output ids are derived from (input id, handler, label) and
published with ``Nats-Msg-Id``; outputs already in the run's history are not published
again; a KV record marks (effect, input) pairs that are done; an effector whose output
is already recorded is not run again. A crash anywhere leads to a redelivery that
produces the same outputs, never duplicates.

Only the events an effect reacts to (and submissions) are delivered; a worker takes every
decision below a delivered event's outputs itself, before acknowledging it
(docs/workers.md, "Deciding below a delivery").
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

import structlog

from engine.errors import EngineError, RunMovedOn
from engine.eventlog.port import Delivery, EventLog, WorkQueue
from engine.runtime.histories import RunHistories
from engine.runtime.rejections import record_rejection
from events.base import Event, tag_of
from events.codec import UnknownEvent
from events.record import Recorded, excerpt_of
from events.run import RUN_ENDINGS, HandlerFailed, ProblemSubmitted, RunFailed
from events.subjects import subject_for, subject_mismatch
from handlers.context import HandlerContext, Services, derive_id
from handlers.lifecycle import run_cancelled
from handlers.routes import Route, routes_for
from handlers.routing import delivered_types

log = structlog.get_logger("apollo.dispatcher")


class DispatchObserver(Protocol):
    """Optional hooks for metrics; called inline, so implementations must be cheap."""

    def acked(self, tag: str) -> None: ...

    def handled(self, tag: str, handler: str, seconds: float) -> None: ...

    def failed(self, tag: str, handler: str, gave_up: bool) -> None: ...

    def redelivered(self, tag: str, deliveries: int) -> None: ...


@dataclass(frozen=True)
class DispatcherSettings:
    consumer: str = "apollo-workers"
    concurrency: int = 64
    """Events handled at once by this worker (model calls spend most time waiting)."""
    max_deliveries: int = 5
    """After this many failed deliveries the event is terminated and a failure recorded."""
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    heartbeat: float = 2.0
    """Seconds between in-progress signals for every delivery being handled: a third of the
    consumer's ack wait keeps a live worker's events its own, while a dead worker's come
    back to the queue one ack wait after its last signal."""
    pull_timeout: float = 1.0
    stop_grace: float = 1.0
    """On stop, seconds handlers in flight get to finish; the rest are handed back at once."""


class Dispatcher:
    """One worker's loop over the shared work consumer."""

    def __init__(
        self,
        event_log: EventLog,
        routes: Sequence[Route],
        services: Services,
        settings: DispatcherSettings | None = None,
        observer: DispatchObserver | None = None,
    ) -> None:
        self.log = event_log
        self.observer = observer
        self.routes = list(routes)
        self.services = services
        self._decider_services = services.for_deciders()  # the catalog, no ports
        self.settings = settings or DispatcherSettings()
        self.histories = RunHistories(event_log)
        self._by_type: dict[type[Event], list[Route]] = {}
        self.delivered = delivered_types(self.routes)
        """Event types this worker needs delivered; it decides every other routed one itself."""
        self.handled = 0
        self._stopping = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._in_flight: dict[int, tuple[Delivery, float]] = {}
        """id(delivery) -> (delivery, when it was pulled): what the heartbeat keeps alive."""

    def stop(self) -> None:
        self._stopping.set()

    async def run(self) -> None:
        """Pull and handle until :meth:`stop`; then in-flight handlers get ``stop_grace``
        seconds to finish and the rest are handed back (see :meth:`_finish_or_hand_back`)."""
        queue = await self.log.work_queue(self.settings.consumer, sorted(tag_of(t) for t in self.delivered))
        slots = asyncio.Semaphore(self.settings.concurrency)
        heartbeat = asyncio.create_task(self._heartbeat())
        try:
            await self._pull_until_stopped(queue, slots)
        finally:
            heartbeat.cancel()

    async def _pull_until_stopped(self, queue: WorkQueue, slots: asyncio.Semaphore) -> None:
        while not self._stopping.is_set():
            free = self.settings.concurrency - len(self._tasks)
            if free <= 0:
                await asyncio.wait(self._tasks, return_when=asyncio.FIRST_COMPLETED)
                continue
            try:
                deliveries = await queue.pull(min(free, 256), self.settings.pull_timeout)
            except Exception as exc:  # noqa: BLE001 - keep serving through broker hiccups
                log.warning("pull_failed", error=str(exc))
                await asyncio.sleep(0.5)
                continue
            for delivery in deliveries:
                task = asyncio.create_task(self._guarded(delivery, slots))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        if self._tasks:
            await self._finish_or_hand_back()

    async def _finish_or_hand_back(self) -> None:
        """Let handlers finish for ``stop_grace`` seconds, then cancel the rest, each of
        which hands its delivery back (nak, no delay).

        A stopping worker (Ctrl-C, SIGTERM) would otherwise keep its events until its
        handlers end (a model call can take minutes) or, once gone, until the ack wait
        sends them elsewhere: a re-run would start with them stuck. A cancelled handler
        is a crash as far as the log goes, which redelivery already makes safe.
        """
        _, pending = await asyncio.wait(self._tasks, timeout=self.settings.stop_grace)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)
            log.info("deliveries_handed_back", count=len(pending))

    async def _guarded(self, delivery: Delivery, slots: asyncio.Semaphore) -> None:
        self._in_flight[id(delivery)] = (delivery, time.monotonic())
        try:
            async with slots:
                try:
                    await self.handle(delivery)
                except Exception as exc:  # noqa: BLE001 - a worker never dies on one message
                    log.error("delivery_crashed", seq=delivery.seq, error=repr(exc))
                    with contextlib.suppress(Exception):
                        await delivery.nak(self._backoff(delivery.deliveries))
        except asyncio.CancelledError:
            await _hand_back(delivery)
            raise
        finally:
            del self._in_flight[id(delivery)]

    async def _heartbeat(self) -> None:
        """Signal in-progress for every delivery held for a heartbeat or longer.

        One loop for all of them instead of a timer per delivery: a delivery's first
        signal comes within two heartbeats of its pull, so a heartbeat of a third of the
        ack wait keeps every event this worker holds (history reads and deciders
        included) from being redelivered while it lives.
        """
        period = self.settings.heartbeat
        while True:
            await asyncio.sleep(period)
            now = time.monotonic()
            held = [delivery for delivery, since in self._in_flight.values() if now - since >= period]
            for delivery in held:
                with contextlib.suppress(Exception):  # a lost signal only risks a redelivery
                    await delivery.in_progress()

    async def handle(self, delivery: Delivery) -> None:
        """Handle one delivery completely: its routes' outputs and every decision below
        them recorded, then ack (or nak/term)."""
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(stream_seq=delivery.seq, subject=delivery.subject)
        event = delivery.event
        if event is None:
            await self._reject(delivery)
            return
        if isinstance(event, UnknownEvent):
            log.warning("unknown_event_skipped", tag=event.tag)
            await delivery.ack()
            return
        mismatch = subject_mismatch(delivery.subject, event)
        if mismatch is not None:  # handling it would act on another run than the one recording it
            await self._reject(delivery, mismatch)
            return
        tag = tag_of(type(event))
        structlog.contextvars.bind_contextvars(run_id=event.run_id, event_id=event.event_id, tag=tag)
        if self.observer is not None and delivery.deliveries > 1:
            self.observer.redelivered(tag, delivery.deliveries)
        ended = False
        try:
            routes = [route for route in self._routes_for(type(event)) if route.applies_to(event)]
            if routes:
                if delivery.expected_run_seq == 0 and delivery.deliveries == 1:
                    # Stored only if it opened its run, and never handled before: the
                    # history is this event alone, no read needed.
                    self.histories.begin(event.run_id, Recorded(delivery.seq, delivery.subject, event))
                # A redelivery's first handling (here or on another worker) may have
                # recorded outputs this worker's cache has not seen: read up to the end.
                records = await (self.histories.current if delivery.deliveries > 1 else self.histories.latest)(
                    event.run_id, delivery.seq)
                read = _HistoryRead(records, event, delivery.seq)
                # A redelivery or a fork may find part of what lies below already recorded.
                settled = delivery.deliveries == 1 and not read.is_fork
                appended: list[Recorded] = []
                cancelled = False
                for route in routes:
                    if read.stops(route):
                        cancelled = True
                        continue
                    outputs, whole = await self._run_route(route, event, delivery, read)
                    appended += outputs
                    settled = settled and whole
                # A cancellation is not delivered: the first delivery that finds one lets the run go.
                ended = await self._decide_below(event, delivery.seq, appended, settled) or cancelled
        except Exception as exc:  # noqa: BLE001 - decide between retry and giving up
            await self._failed(delivery, event, exc)
            return
        await delivery.ack()
        self.handled += 1
        if self.observer is not None:
            self.observer.acked(tag)
        if ended or isinstance(event, RUN_ENDINGS):
            # An ended run's events would only weigh on every full garbage collection.
            self.histories.forget(event.run_id)

    def _routes_for(self, event_type: type[Event]) -> list[Route]:
        found = self._by_type.get(event_type)
        if found is None:
            found = self._by_type[event_type] = routes_for(self.routes, event_type)
        return found

    async def _run_route(
        self, route: Route, event: Event, delivery: Delivery, read: _HistoryRead
    ) -> tuple[list[Recorded], bool]:
        """Run one route and publish its new outputs.

        Returns the outputs that extended the cache, and whether they are all of the
        route's outputs, each appended now and extending the cache.
        """
        key = f"{route.name}.{event.event_id}"
        # Only an effect is checked: one redelivered, or a request a fork copied together
        # with its result (the fork marks those handled before appending them). Deciders
        # are simply decided again: outputs already in the history are not published twice.
        may_be_handled = route.kind == "effect" and (delivery.deliveries > 1 or read.is_fork)
        if may_be_handled and await self.log.was_handled(key):
            return [], False
        caused = read.caused
        if route.kind == "effect" and _already_effected(caused, event, route):
            await self.log.mark_handled(key)
            return [], False
        ctx = HandlerContext(
            event=event,
            handler=route.name,
            history=read.history,
            services=self.services if route.kind == "effect" else self._decider_services,
            wall_clock=route.kind == "effect",
            typed_settings=self.histories.settings(event.run_id, delivery.seq),
        )
        structlog.contextvars.bind_contextvars(handler=route.name)
        started = time.perf_counter()
        outputs = await route.handler(event, ctx)
        if self.observer is not None:
            self.observer.handled(tag_of(type(event)), route.name, time.perf_counter() - started)
        fresh = [o for o in outputs if o.event_id not in caused]
        appended, whole = await self._publish(event.run_id, fresh, delivery.seq)
        if route.kind == "effect":
            # Deciders need no mark: on a redelivery their outputs are in the history (and
            # not published again) and re-running a pure decider costs less than the mark.
            await self.log.mark_handled(key)
        log.debug("event_handled", outputs=len(outputs))
        return appended, whole and len(fresh) == len(outputs)

    async def _decide_below(self, root: Event, root_seq: int, appended: Sequence[Recorded], settled: bool) -> bool:
        """Take every decision below ``root``'s outputs, before ``root`` is acknowledged.

        Events with only deciders among their routes are never delivered: the worker that
        handles their cause decides them, and so on down to the next effect's event, which
        is delivered. ``settled`` says ``appended`` are all of ``root``'s outputs, just
        appended with no gap in the cache: then each decision is taken on the cache alone.
        Otherwise (a redelivery, a fork, another writer in between) the decisions are
        taken on the run read back, where what is already recorded is not published again.
        Returns whether the run ended below ``root`` with an ending that is not delivered
        (the worker then lets the run go; a delivered ending does that on its delivery).
        """
        ended = [False]
        if settled and await self._decide_appended(appended, ended):
            return ended[0]
        return await self.settle(root.run_id, {root.event_id}, root_seq)

    async def _decide_appended(self, appended: Sequence[Recorded], ended: list[bool]) -> bool:
        """Decide below events this worker just appended, on its cache (depth first, as the
        log then reads). Returns False where the cache cannot show that nothing is recorded
        below them yet: the caller then reads the run back."""
        for record in appended:
            event = record.event
            if type(event) in self.delivered:
                continue  # its delivery handles it (and lets an ended run go)
            if isinstance(event, RUN_ENDINGS):
                ended[0] = True
            routes = [route for route in self._routes_for(type(event)) if route.applies_to(event)]
            if not routes:
                continue
            cached = self.histories.cached(event.run_id)
            if not cached or cached[-1].seq < record.seq:
                return False  # the run left the cache meanwhile
            read = _HistoryRead(cached, event, record.seq)
            if read.cancelled:
                continue
            for route in routes:
                outputs = await self._decide(route, event, read, record.seq)
                fresh = [o for o in outputs if o.event_id not in read.caused]
                more, whole = await self._publish(event.run_id, fresh, record.seq)
                if not whole or len(fresh) != len(outputs) or not await self._decide_appended(more, ended):
                    return False
        return True

    async def settle(self, run_id: str, roots: set[str], after_seq: int, *, decide_roots: bool = False) -> bool:
        """Take every decision still missing below ``roots`` (and of ``roots`` themselves,
        with ``decide_roots``) on the run read back up to at least ``after_seq``.

        Each pass reads what is new, decides the undelivered events below the roots that
        this walk has not decided yet, and publishes the outputs not yet recorded; it
        ends when a pass finds nothing left. Returns whether the run has ended (with an
        ending that is not delivered).
        """
        decided: set[str] = set()
        while True:
            # To the run's current end: below the roots may lie events another worker
            # recorded (a first handling that failed further down) that this cache lacks.
            records = await self.histories.current(run_id, after_seq)
            below = set(roots)
            todo = []
            for record in records:
                event = record.event
                if event.event_id in roots:
                    wanted = decide_roots
                elif event.causation_id in below:
                    below.add(event.event_id)
                    wanted = True
                else:
                    continue
                if wanted and event.event_id not in decided and type(event) not in self.delivered:
                    todo.append(record)
            if not todo:
                return any(isinstance(r.event, RUN_ENDINGS) and type(r.event) not in self.delivered for r in records)
            for record in todo:
                event = record.event
                decided.add(event.event_id)
                read = _HistoryRead(records, event, record.seq)
                if read.cancelled:
                    continue
                for route in self._routes_for(type(event)):
                    if route.applies_to(event):
                        outputs = await self._decide(route, event, read, record.seq)
                        await self._publish(run_id, [o for o in outputs if o.event_id not in read.caused], record.seq)

    async def _decide(self, route: Route, event: Event, read: _HistoryRead, seq: int) -> Sequence[Event]:
        """One decider's outputs; its failure is raised as :class:`DecisionFailed`, naming it."""
        ctx = HandlerContext(event=event, handler=route.name, history=read.history, services=self._decider_services,
                             typed_settings=self.histories.settings(event.run_id, seq))
        structlog.contextvars.bind_contextvars(handler=route.name)  # a failed publish of its outputs names it
        try:
            return await route.handler(event, ctx)
        except Exception as exc:
            raise DecisionFailed(event, route.name, exc) from exc

    async def _publish(self, run_id: str, outputs: Sequence[Event], input_seq: int) -> tuple[list[Recorded], bool]:
        """Append outputs in order; keep the history cache gap-free without re-reading.

        Each append expects the run's last sequence to be the cached one; when it holds,
        the output extends the cache, so the next event of this run needs no read. When
        another writer got in first, append unconditionally and let the next read fill in.
        Returns the outputs that extended the cache, and whether that is all of them.
        """
        extended: list[Recorded] = []
        expected = self.histories.last_seq(run_id) if self.histories.last_seq(run_id) >= input_seq else None
        for output in outputs:
            if expected is not None:
                try:
                    appended = await self.log.append(output, expected_run_seq=expected)
                except RunMovedOn:
                    expected = None
                else:
                    self.histories.wrote(output.run_id, appended.seq)
                    if not appended.duplicate:
                        record = Recorded(appended.seq, subject_for(output), output)
                        if self.histories.extend(run_id, record, after_seq=expected):
                            extended.append(record)
                        expected = appended.seq
                    else:
                        expected = None
                    continue
            appended = await self.log.append(output)
            # Later reads of the run must reach this output (read-your-writes).
            self.histories.wrote(output.run_id, appended.seq)
        return extended, len(extended) == len(outputs)

    async def _reject(self, delivery: Delivery, reason: str | None = None) -> None:
        """Undecodable bytes, or a body disagreeing with its subject: record why (on the
        subject's run when there is one) and ack."""
        await record_rejection(self.log, seq=delivery.seq, subject=delivery.subject,
                               reason=reason or delivery.error or "undecodable", excerpt=excerpt_of(delivery.raw),
                               lost=delivery.lost)
        await delivery.ack()

    async def _failed(self, delivery: Delivery, delivered: Event, exc: Exception) -> None:
        """Retry the delivery, or give up on it and record why: the handler that failed,
        against its own input (a decision below the delivered event names that event)."""
        event, handler = delivered, structlog.contextvars.get_contextvars().get("handler", "?")
        if isinstance(exc, DecisionFailed):
            event, handler, exc = exc.event, exc.handler, exc.error
        # Broker trouble (a leader election, a restart) is retried for as long as it lasts:
        # only failures of the handler itself count towards giving up.
        gave_up = delivery.deliveries >= self.settings.max_deliveries and not _infrastructure(exc, self.log)
        if self.observer is not None:
            self.observer.failed(tag_of(type(event)), handler, gave_up)
        if not gave_up:
            delay = self._backoff(delivery.deliveries)
            log.warning("handler_retry", error=repr(exc), handler=handler, deliveries=delivery.deliveries,
                        delay=delay)
            await delivery.nak(delay)
            return
        detail = "".join(traceback.format_exception_only(exc)).strip()
        log.error("handler_gave_up", error=detail, handler=handler, deliveries=delivery.deliveries)
        failure = HandlerFailed(
            event_id=derive_id(event.event_id, "dispatcher", "handler-failed"),
            run_id=event.run_id,
            occurred_at=_now(),
            causation_id=event.event_id,
            correlation_id=event.correlation_id,
            handler=handler,
            failed_event_id=event.event_id,
            failed_type=tag_of(type(event)),
            error=detail[:2000],
            deliveries=delivery.deliveries,
        )
        run_failed = RunFailed(
            event_id=derive_id(event.event_id, "dispatcher", "run-failed"),
            run_id=event.run_id,
            occurred_at=_now(),
            causation_id=failure.event_id,
            correlation_id=event.correlation_id,
            reason=f"handler failed on {tag_of(type(event))}: {detail[:300]}",
        )
        try:
            await self.log.append(failure)
            await self.log.append(run_failed)
        except Exception as append_error:  # noqa: BLE001 - keep the event until the failure is recorded
            log.warning("failure_not_recorded", error=repr(append_error))
            await delivery.nak(self._backoff(delivery.deliveries))
            return
        await delivery.term()
        self.histories.forget(event.run_id)

    def _backoff(self, deliveries: int) -> float:
        return min(self.settings.backoff_max, self.settings.backoff_base * 2 ** max(0, deliveries - 1))


class DecisionFailed(EngineError):
    """A decider below a delivered event failed: retried with that delivery, and recorded
    against the decider's own input if it keeps failing (classified by its cause, not as
    an engine error: see ``Dispatcher._failed``)."""

    def __init__(self, event: Event, handler: str, error: Exception) -> None:
        super().__init__(f"{handler} failed on {tag_of(type(event))} {event.event_id}: {error!r}")
        self.event = event
        self.handler = handler
        self.error = error


class _HistoryRead:
    """One read of a run's history, shared by every route of the event being handled."""

    def __init__(self, records: Sequence[Recorded], event: Event, seq: int) -> None:
        self._records = records
        self._event_id = event.event_id
        self._seq = seq
        self._history: list[Event] | None = None
        self._caused: set[str] | None = None

    @property
    def is_fork(self) -> bool:
        """Whether the run continues a parent's prefix (its submission names the parent)."""
        first = self._records[0].event if self._records else None
        return not isinstance(first, ProblemSubmitted) or first.parent_run_id is not None

    @property
    def history(self) -> list[Event]:
        """The run's events up to and including the one being handled."""
        if self._history is None:
            self._history = [r.event for r in self._records if r.seq <= self._seq]
        return self._history

    @property
    def cancelled(self) -> bool:
        """Whether the run was cancelled at or before the event being handled: its deciders
        stop there (replay verification applies the same rule to the same prefix)."""
        return run_cancelled(self.history)

    def stops(self, route: Route) -> bool:
        """Whether a cancellation keeps ``route`` from running: a decider by the rule above,
        an effect also by one recorded after its event (the call would be wasted)."""
        if route.kind == "decide":
            return self.cancelled
        return run_cancelled(record.event for record in self._records)

    @property
    def caused(self) -> set[str]:
        """Ids of recorded events caused by the one being handled (outputs already published)."""
        if self._caused is None:
            self._caused = {r.event.event_id for r in self._records if r.event.causation_id == self._event_id}
        return self._caused


def _already_effected(caused: set[str], event: Event, route: Route) -> bool:
    """An effector records exactly one output; if one exists the effect happened."""
    # A first delivery usually finds nothing caused yet: no ids to derive then.
    return bool(caused) and any(derive_id(event.event_id, route.name, label) in caused for label in EFFECT_LABELS)


EFFECT_LABELS = ("result",)
"""Effectors label their single output ``result`` so the dispatcher can recognise it."""


def _infrastructure(exc: BaseException, event_log: EventLog) -> bool:
    """Errors of the bus or the network rather than of the handler's logic; the log's
    adapter says which of its own errors count (an offloaded body that is gone stays gone)."""
    verdict = event_log.bus_failure(exc)
    if verdict is not None:
        return verdict
    return isinstance(exc, (EngineError, TimeoutError, ConnectionError, OSError))


def _now() -> datetime:
    return datetime.now(UTC)


async def _hand_back(delivery: Delivery) -> None:
    """Nak a delivery whose handler was cancelled, so it is redelivered now (bounded: the
    connection may be closing)."""
    with contextlib.suppress(Exception):
        await asyncio.shield(asyncio.wait_for(delivery.nak(), 2.0))
