"""Output piped into a reader that stopped reading (`apollo runs | head -1`): the reader has
what it wanted, so the command ends quietly with success instead of `[Errno 32] Broken pipe`."""

from __future__ import annotations

import contextlib
import os
import select
import sys


def flush_output() -> None:
    """Flush standard output now, inside the command, so a gone reader is noticed here and not
    as a complaint while the interpreter exits."""
    sys.stdout.flush()


def reader_gone() -> bool:
    """Whether standard output is a pipe nobody reads any more (and not some other broken pipe,
    such as a socket, which is a real failure): the kernel flags such a pipe as in error."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # no file descriptor, or no poll on this system
        return False


def discard_output() -> None:
    """Point standard output at /dev/null, so the exit's own flush has nowhere to fail."""
    with contextlib.suppress(OSError, ValueError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
