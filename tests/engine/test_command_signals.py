"""A command told to end (Ctrl-C, SIGTERM, a hang-up) ends as interrupted, whatever swallowed its cancellation."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

import pytest

from engine.runtime.signals import run_command, stop_if_interrupted


async def _signal_self(signum: int) -> None:
    await asyncio.sleep(0.05)
    os.kill(os.getpid(), signum)


async def _swallowing_loop(signum: int, passes: list[int]) -> str:
    """A loop whose awaits turn a cancellation into a handled error, as some libraries do."""
    task = asyncio.create_task(_signal_self(signum))
    for index in range(200):
        passes.append(index)
        with contextlib.suppress(asyncio.CancelledError):  # swallowed
            await asyncio.sleep(0.01)
        stop_if_interrupted()
    await task
    return "finished"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_ends_a_loop_that_swallows_its_cancellation(signum: int) -> None:
    """The loop stops at its next pass and the command raises KeyboardInterrupt."""
    passes: list[int] = []
    with pytest.raises(KeyboardInterrupt):
        run_command(_swallowing_loop(signum, passes))
    assert len(passes) < 200


def test_a_command_that_returns_after_a_signal_still_counts_as_interrupted() -> None:
    """Even a coroutine that swallows the cancel and returns ends as interrupted."""
    async def stubborn() -> str:
        await _signal_self(signal.SIGINT)
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            return "pretended to finish"
        return "finished"

    with pytest.raises(KeyboardInterrupt):
        run_command(stubborn())


def test_an_uninterrupted_command_returns_its_result_and_restores_the_handlers() -> None:
    """No signal: the result comes back, and Ctrl-C raises KeyboardInterrupt again afterwards."""
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}

    async def quick() -> int:
        return 7

    assert run_command(quick()) == 7
    assert {sig: signal.getsignal(sig) for sig in before} == before


def test_ctrl_c_stays_ignored_for_a_background_command() -> None:
    """Where SIGINT was ignored (a background job), the command does not start handling it."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        async def probe() -> object:
            return signal.getsignal(signal.SIGINT)

        assert run_command(probe()) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
