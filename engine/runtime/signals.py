"""How a process stops on a signal: the engine stops gracefully, a command ends like Ctrl-C."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_ENDING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # a closed terminal ends a command too


def install_signal_handlers(stop: Callable[[], None]) -> None:
    """Ctrl-C / SIGTERM stop the engine cleanly."""
    loop = asyncio.get_running_loop()
    for sig in _ENDING_SIGNALS:
        loop.add_signal_handler(sig, stop)


class _Interruption:
    """Whether a command was told to end (Ctrl-C, SIGTERM, a closed terminal), and by what."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.task: asyncio.Task[Any] | None = None

    def __call__(self, signum: int) -> None:
        self.signum = signum
        if self.task is not None and not self.task.done():
            self.task.cancel()


_current = _Interruption()


def interrupted() -> bool:
    """Whether the running command was told to end."""
    return _current.signum is not None


def stop_if_interrupted() -> None:
    """Long command loops call this on each pass. Cancelling the command is how a signal
    ends it, but a library may turn a cancellation into an error it then handles (nats-py
    does in places, and Python 3.11's ``wait_for`` drops one that races a result): the
    loop still ends at its next pass."""
    if interrupted():
        raise asyncio.CancelledError


def run_command(main: Coroutine[Any, Any, T]) -> T:
    """Run a command's coroutine; Ctrl-C, SIGTERM and a hang-up end it with KeyboardInterrupt.

    The signals are handled by the event loop, never by raising inside whatever Python
    happens to be running (an import's lock clean-up printed "Exception ignored" that
    way), and a command that was told to end ends as interrupted even if some code
    swallowed the cancellation. Ctrl-C stays ignored where it was (a background job).
    `apollo up` and `apollo worker` replace these with a graceful stop.
    """
    global _current
    _current = _Interruption()
    with asyncio.Runner() as runner:
        try:
            result = runner.run(_interruptible(main, _current))
        except asyncio.CancelledError:
            if not interrupted():
                raise
            raise KeyboardInterrupt from None
    if interrupted():
        raise KeyboardInterrupt
    return result


async def _interruptible(main: Coroutine[Any, Any, T], interruption: _Interruption) -> T:
    interruption.task = asyncio.current_task()
    handled = _handle_ending_signals(interruption)
    try:
        return await main
    finally:
        _restore(handled)


def _handle_ending_signals(interruption: _Interruption) -> dict[int, Any]:
    """Route the ending signals to ``interruption``; returns the handlers they replaced."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    loop = asyncio.get_running_loop()
    replaced: dict[int, Any] = {}
    for sig in _ENDING_SIGNALS:
        previous = signal.getsignal(sig)
        if sig == signal.SIGINT and previous == signal.SIG_IGN:  # started in the background: keep ignoring
            continue
        with contextlib.suppress(ValueError, RuntimeError, OSError):
            loop.add_signal_handler(sig, interruption, sig)
            replaced[sig] = previous
    return replaced


def _restore(handled: dict[int, Any]) -> None:
    loop = asyncio.get_running_loop()
    for sig, previous in handled.items():
        with contextlib.suppress(ValueError, RuntimeError, OSError):
            loop.remove_signal_handler(sig)
            signal.signal(sig, previous if previous is not None else signal.SIG_DFL)


def end_like_ctrl_c() -> None:
    """Outside the event loop, SIGTERM and SIGHUP (a closed terminal) end a command as Ctrl-C
    does, so its clean-up runs. Inside it, :func:`run_command` routes them."""
    def as_interrupt(_signum: int, frame: Any) -> None:
        on_ctrl_c = signal.getsignal(signal.SIGINT)
        if callable(on_ctrl_c):
            on_ctrl_c(signal.SIGINT, frame)
        else:  # Ctrl-C ignored (started in the background): end all the same
            raise KeyboardInterrupt

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, as_interrupt)
