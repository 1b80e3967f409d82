"""Non-blocking fd and socket I/O on the running event loop (no threads)."""

from __future__ import annotations

import asyncio
import os
import socket

TRUNCATED = b"?"
"""Stands in for a message longer than the receive buffer (never a valid message)."""


async def recv_msg(sock: socket.socket, max_fds: int = 1) -> tuple[bytes, list[int]]:
    """One SEQPACKET message and any passed fds; ``b""`` when the peer closed.

    A message cut short by the buffer comes back as :data:`TRUNCATED`.
    """
    loop = asyncio.get_running_loop()
    while True:
        try:
            message, fds, flags, _addr = socket.recv_fds(sock, 1 << 16, max_fds)
            if flags & socket.MSG_TRUNC:
                message = TRUNCATED
            return message, fds
        except (BlockingIOError, InterruptedError):
            await _ready(loop, sock.fileno(), reading=True)
        except ConnectionResetError:
            return b"", []


async def send_msg(sock: socket.socket, message: bytes, fds: list[int] = ()) -> None:  # type: ignore[assignment]
    """Send one SEQPACKET message, waiting for buffer space if needed."""
    loop = asyncio.get_running_loop()
    while True:
        try:
            socket.send_fds(sock, [message], list(fds))
            return
        except (BlockingIOError, InterruptedError):
            await _ready(loop, sock.fileno(), reading=False)


async def write_all(fd: int, data: bytes) -> None:
    """Write everything to a non-blocking pipe; a vanished reader just ends the write."""
    loop = asyncio.get_running_loop()
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
            view = view[written:]
        except (BlockingIOError, InterruptedError):
            await _ready(loop, fd, reading=False)
        except BrokenPipeError:
            return


async def read_some(fd: int, size: int = 1 << 16) -> bytes:
    """The next chunk from a non-blocking pipe; ``b""`` at end of file."""
    loop = asyncio.get_running_loop()
    while True:
        try:
            return os.read(fd, size)
        except (BlockingIOError, InterruptedError):
            await _ready(loop, fd, reading=True)


async def readable(fd: int) -> None:
    """Wait until ``fd`` polls readable (for a pidfd: its process has exited)."""
    await _ready(asyncio.get_running_loop(), fd, reading=True)


async def _ready(loop: asyncio.AbstractEventLoop, fd: int, *, reading: bool) -> None:
    future: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not future.done():
            future.set_result(None)

    if reading:
        loop.add_reader(fd, wake)
    else:
        loop.add_writer(fd, wake)
    try:
        await future
    finally:
        if reading:
            loop.remove_reader(fd)
        else:
            loop.remove_writer(fd)
