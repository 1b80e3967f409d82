"""Grading pool processes ignore Ctrl-C and hang-up: their owner shuts them down."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from engine.grading.pool import ProcessPoolGrader


def _pool_processes(grader: ProcessPoolGrader) -> list[int]:
    executor = grader._current_pool().executor  # the processes under test
    return [process.pid for process in (executor._processes or {}).values()]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
async def test_pool_workers_survive_terminal_signals_and_keep_grading(signum: signal.Signals) -> None:
    """A Ctrl-C or hang-up sent to a worker leaves it grading, with no KeyboardInterrupt."""
    grader = ProcessPoolGrader(workers=1)
    try:
        await asyncio.to_thread(grader.start)
        pids = _pool_processes(grader)
        assert pids
        for pid in pids:
            os.kill(pid, signum)
        grade = await grader.grade("1/2", "0.5", "math")
        assert grade.score == 1.0
        assert _pool_processes(grader) == pids  # the same workers, not a replaced pool
    finally:
        grader.close()


async def test_the_pool_is_started_without_changing_the_owners_signal_mask() -> None:
    """Terminal signals are held only while the pool starts: the owner still gets Ctrl-C."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, set())
    grader = ProcessPoolGrader(workers=1)
    try:
        grader.start_in_background()
        assert signal.pthread_sigmask(signal.SIG_BLOCK, set()) == before
    finally:
        grader.close()
