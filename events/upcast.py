"""Upcasters: rewrite older raw events to the current schema before typed decoding.

Register one function per (tag, from_version); it receives the raw dict of that version
and returns the dict of the next version. Chains run until the current version.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from events.base import SCHEMA_VERSION

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]

UPCASTERS: Final[dict[tuple[str, int], Upcaster]] = {}


def register_upcaster(tag: str, from_version: int) -> Callable[[Upcaster], Upcaster]:
    """Decorator: ``fn`` turns a version ``from_version`` event of ``tag`` into the next."""

    def wrap(fn: Upcaster) -> Upcaster:
        UPCASTERS[(tag, from_version)] = fn
        return fn

    return wrap


def upcast(tag: str, raw: dict[str, Any]) -> dict[str, Any]:
    """Apply every upcaster from the event's version up to the current one."""
    version = raw.get("schema_version", 1)
    if not isinstance(version, int):
        return raw
    while version < SCHEMA_VERSION:
        step = UPCASTERS.get((tag, version))
        if step is None:
            break
        raw = step(dict(raw))
        version += 1
        raw["schema_version"] = version
    return raw
