"""How a process stops on a signal: the engine stops gracefully, a command ends like Ctrl-C."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from typing import Any


def install_signal_handlers(stop: Callable[[], None]) -> None:
    """Ctrl-C / SIGTERM stop the engine cleanly."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # a closed terminal stops it too
        loop.add_signal_handler(sig, stop)


def end_like_ctrl_c() -> None:
    """SIGTERM and SIGHUP (a closed terminal) end a command as Ctrl-C does, so its clean-up
    runs: the embedded server stops and the grading pool shuts down (no leaked semaphores).
    `apollo up` and `apollo worker` replace these with a graceful stop."""
    def as_interrupt(_signum: int, frame: Any) -> None:
        on_ctrl_c = signal.getsignal(signal.SIGINT)  # asyncio's: cancel the main task
        if callable(on_ctrl_c):
            on_ctrl_c(signal.SIGINT, frame)
        else:  # Ctrl-C ignored (started in the background): end all the same
            raise KeyboardInterrupt

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, as_interrupt)
