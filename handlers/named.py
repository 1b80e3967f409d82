"""Tables of named things (domains, graders, rewards): built-ins plus plugin entries.

A table is built whole and never changed afterwards (see :mod:`handlers.catalog`), so a
name clash or a malformed entry refuses the whole table and nothing runs half-configured.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol, TypeVar


class Named(Protocol):
    @property
    def name(self) -> str: ...  # read-only: the tables hold frozen records

    def check(self) -> None:
        """Raise ``ValueError`` when the item is malformed."""


T = TypeVar("T", bound=Named)


def index(kind: str, items: Iterable[T], taken: Mapping[str, T] | None = None) -> dict[str, T]:
    """``taken`` plus ``items`` by name.

    Raises:
        ValueError: an item is malformed, or its name is taken or given twice.
    """
    table = dict(taken or {})
    for item in items:
        item.check()
        if item.name in table:
            msg = f"{kind} {item.name!r} is already registered"
            raise ValueError(msg)
        table[item.name] = item
    return table
