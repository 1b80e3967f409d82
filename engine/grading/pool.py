"""The answer grader adapter: grading in a small pool of worker processes.

Grading cannot run on the event loop or in threads: ``math-verify`` guards its work
with ``signal.alarm`` (main thread only) and sympy can spin for a long time on a
hostile expression. Each call therefore runs in the main thread of a worker process
with a deadline; a call that misses it scores 0 and the pool is replaced, because the
only way to stop a stuck worker is to end its process.

Deadlines count running time only: at most one call per worker is handed to the pool
at a time, and a fresh pool is warmed up before calls are handed to it, so time spent
queueing or starting workers is never charged to a call.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import select
import signal
import threading
import time
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import asynccontextmanager, contextmanager
from typing import Final

from engine.runtime.processes import alive
from handlers.grading import GRADING_MODES, grade_answer
from handlers.grading.dispatch import POOLED_SPECS, run_grader
from handlers.grading.registry import GraderSpec
from handlers.ports import Grade

DEFAULT_TIMEOUT_S: Final = 10.0
DEFAULT_MEMORY_LIMIT: Final = 3 * 1024**3
STARTUP_TIMEOUT_S: Final = 120.0
_SLOT_POLL_S: Final = 0.005


class _Pool:
    """One executor generation and the futures that say its workers are warm."""

    def __init__(self, executor: ProcessPoolExecutor, workers: int) -> None:
        self.executor = executor
        self.warm: list[Future[bool]] = [executor.submit(_ping) for _ in range(workers)]


class ProcessPoolGrader:
    """:class:`handlers.ports.AnswerGrader` backed by a ``ProcessPoolExecutor``.

    The pool starts on first use (or :meth:`start`); its workers import and exercise
    the graders once before taking calls. Safe to share between event loops and
    threads. Workers are started with ``forkserver`` (never ``fork``: the parent runs
    threads and an event loop), so the program's main module must be import-safe
    (the usual ``if __name__ == "__main__":`` guard).

    Example::

        grader = ProcessPoolGrader()
        grade = await grader.grade("\\frac{1}{2}", "0.5", "math")
        grader.close()
    """

    def __init__(
        self,
        *,
        workers: int | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        memory_limit_bytes: int | None = DEFAULT_MEMORY_LIMIT,
        start_method: str = "forkserver",
        numeric_tolerance: float | None = None,
    ) -> None:
        self._workers = workers or min(2, os.cpu_count() or 1)
        self._numeric_tolerance = numeric_tolerance
        self._timeout_s = timeout_s
        self._memory_limit = memory_limit_bytes
        self._context = multiprocessing.get_context(start_method)
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(self._workers)
        self._pool: _Pool | None = None
        self._closed = False

    async def grade(
        self, answer: str, ground_truth: str, mode: str, *, metadata: dict | None = None,
        spec: GraderSpec | None = None,
    ) -> Grade:
        """Grade in a worker with ``spec.grade`` (by default the built-in grader ``mode``);
        a timeout or a dead worker scores 0 and says why.

        Raises:
            ValueError: no ``spec`` and ``mode`` is not a known grading mode.
            RuntimeError: the grader is closed.
        """
        if spec is None:
            spec = POOLED_SPECS.get(mode)
        if spec is None:
            msg = f"unknown grading mode {mode!r}; expected one of {', '.join(GRADING_MODES)}"
            raise ValueError(msg)
        async with self._slot():
            for _ in range(2):
                pool = self._current_pool()
                try:
                    await _wait_all(pool.warm, STARTUP_TIMEOUT_S)
                    future = pool.executor.submit(run_grader, spec.grade, answer, ground_truth, dict(metadata or {}),
                                                  numeric_tolerance=self._numeric_tolerance)
                    return await asyncio.wait_for(asyncio.wrap_future(future), self._timeout_s)
                except TimeoutError:
                    self._replace(pool)
                    detail = f"grading took longer than {self._timeout_s:g} s"
                    return Grade(score=0.0, method=f"{mode}:timeout", detail=detail)
                except BrokenProcessPool:
                    # Another call's timeout, or a worker killed for memory, broke this
                    # pool; the call is retried once on a fresh pool.
                    self._replace(pool)
        return Grade(score=0.0, method=f"{mode}:error", detail="grading worker died")

    def start(self) -> None:
        """Start the workers now instead of on the first call, and wait until warm.

        Blocks for about a second; from async code run it with ``asyncio.to_thread``.
        """
        for future in self._current_pool().warm:
            future.result(timeout=STARTUP_TIMEOUT_S)

    def start_in_background(self) -> None:
        """Begin starting the workers and return at once (the first grade then finds them warm)."""
        self._current_pool()

    def close(self) -> None:
        """Stop the workers; later calls raise ``RuntimeError``. Idempotent."""
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            _stop(pool.executor)

    async def __aenter__(self) -> ProcessPoolGrader:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()

    @asynccontextmanager
    async def _slot(self) -> AsyncIterator[None]:
        """Hold one of ``workers`` slots; polling keeps it usable from any event loop."""
        # An asyncio primitive would bind the grader to one loop; callers may use several.
        while not self._slots.acquire(blocking=False):  # noqa: ASYNC110 - cross-loop wait
            await asyncio.sleep(_SLOT_POLL_S)
        try:
            yield
        finally:
            self._slots.release()

    def _current_pool(self) -> _Pool:
        with self._lock:
            if self._closed:
                msg = "the grader is closed"
                raise RuntimeError(msg)
            if self._pool is None:
                with _terminal_signals_held():
                    executor = ProcessPoolExecutor(
                        max_workers=self._workers,
                        mp_context=self._context,
                        initializer=_warm_up,
                        initargs=(self._memory_limit, os.getpid()),
                    )
                    self._pool = _Pool(executor, self._workers)
            return self._pool

    def _replace(self, broken: _Pool) -> None:
        """Drop ``broken`` (if still current) so the next call starts a fresh pool."""
        with self._lock:
            if self._pool is broken:
                self._pool = None
        _stop(broken.executor)


@contextmanager
def _terminal_signals_held() -> Iterator[None]:
    """Hold Ctrl-C and hang-up (SIGINT, SIGHUP) in this thread while the pool starts.

    A terminal sends them to the whole process group. The pool's helper processes (the
    fork server, multiprocessing's resource tracker, the workers) inherit this thread's
    signal mask, so they never see them and the owner shuts them down in order; a
    resource tracker ended by SIGHUP would instead be restarted and print KeyError
    tracebacks for every semaphore it never saw. The owner gets any held signal as soon
    as the mask is restored.
    """
    held = {signal.SIGINT, signal.SIGHUP}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


async def _wait_all(futures: list[Future[bool]], timeout_s: float) -> None:
    """Wait for already-submitted futures (shared between callers) without cancelling them."""
    wrapped = [asyncio.wrap_future(future) for future in futures]
    await asyncio.wait_for(asyncio.shield(asyncio.gather(*wrapped)), timeout_s)


def _stop(executor: ProcessPoolExecutor) -> None:
    """Shut ``executor`` down without waiting, ending workers that may be stuck."""
    # 3.11 has no public way to end workers; the executor drops _processes once broken.
    processes = list((getattr(executor, "_processes", None) or {}).values())
    executor.shutdown(wait=False)  # queued calls fail with BrokenProcessPool and are retried
    for process in processes:
        if process.is_alive():
            process.kill()


def _warm_up(memory_limit: int | None, owner: int | None = None) -> None:
    """Worker initializer: end with ``owner``, cap memory, then import and run each grader once.

    Workers ignore Ctrl-C and a closed terminal (SIGINT, SIGHUP reach the whole process
    group): the owner shuts the pool down, so an interrupted command prints no
    KeyboardInterrupt traceback from each worker.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    if owner is not None:
        _exit_with(owner)
    # math-verify logs every timeout on stderr; the grade's detail already says why it is 0.
    logging.getLogger("math_verify").setLevel(logging.ERROR)
    if memory_limit is not None:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = memory_limit if hard == resource.RLIM_INFINITY else min(memory_limit, hard)
        if soft == resource.RLIM_INFINITY or soft > limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    grade_answer("1/2", "0.5", "math_verify")
    grade_answer("\\frac{1}{2}", "0.5", "math")
    grade_answer("x+1", "1+x", "reference")


def _exit_with(owner: int) -> None:
    """End this worker when the process that owns the pool is gone.

    A pool worker is a child of multiprocessing's fork server and holds that server's
    liveness pipe, and each waits on the other: when the owner is killed (SIGKILL, OOM)
    neither would ever exit. A daemon thread waits on the owner's pidfd (immune to pid
    reuse; polling where pidfds are missing) and ends the worker, which lets the fork
    server see its pipe close and end too.
    """
    def watch() -> None:
        try:
            handle = os.pidfd_open(owner)
        except (AttributeError, OSError):
            handle = None
        if handle is not None:
            select.select([handle], [], [])
        else:
            while os.getppid() != 1 and alive(owner):
                time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="pool-owner-watch", daemon=True).start()



def _ping() -> bool:
    return True


__all__ = ["DEFAULT_TIMEOUT_S", "ProcessPoolGrader"]
