"""One thread for every tensor computation of the demo (generation, training, checkpoints).

``asyncio.to_thread`` hands work to whichever pool thread is free, and glibc gives each
thread its own malloc arena: a training step's gigabytes of activations, freed in one
arena and allocated next time in another, kept the process growing by gigabytes a step
until the kernel killed it. On one thread the same memory is reused, and ``malloc_trim``
after each call hands what is left free back to the system.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

_EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="apollo-torch")


def _libc_trim() -> Callable[[], None]:
    name = ctypes.util.find_library("c")
    trim = getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None
    if trim is None:  # not glibc: nothing to hand back
        return lambda: None
    return lambda: trim(0)


_trim = _libc_trim()


def _call_and_trim(fn: Callable[..., T], *args: Any) -> T:
    try:
        return fn(*args)
    finally:
        _trim()


async def run_torch(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on the tensor thread, awaited without blocking the event loop."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_EXECUTOR, functools.partial(_call_and_trim, fn, *args))
