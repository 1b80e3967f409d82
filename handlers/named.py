"""A registry of named things: built-ins plus the plugins installed at start-up.

Graders, rewards and domains all work this way; plugins are swapped as a whole so the
engine never runs half-configured.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Generic, Protocol, TypeVar


class Named(Protocol):
    name: str

    def check(self) -> None:
        """Raise ``ValueError`` when the item is malformed."""


T = TypeVar("T", bound=Named)


class NamedRegistry(Generic[T]):
    """Built-in items (registered at import) and plugin items (replaced together)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.builtin: dict[str, T] = {}
        self.plugins: dict[str, T] = {}

    def add_builtin(self, item: T) -> None:
        item.check()
        self.builtin[item.name] = item

    def install_plugins(self, items: Iterable[T]) -> None:
        """Replace every plugin item; a name clash or a malformed item changes nothing."""
        chosen: dict[str, T] = {}
        for item in items:
            item.check()
            if item.name in self.builtin or item.name in chosen:
                msg = f"{self.kind} {item.name!r} is already registered"
                raise ValueError(msg)
            chosen[item.name] = item
        self.plugins.clear()
        self.plugins.update(chosen)

    def get(self, name: str) -> T:
        """The item called ``name``; ``LookupError`` names the registered ones."""
        found = self.builtin.get(name) or self.plugins.get(name)
        if found is None:
            msg = f"unknown {self.kind} {name!r} (registered: {', '.join(self.names())})"
            raise LookupError(msg)
        return found

    def names(self) -> list[str]:
        return sorted({*self.builtin, *self.plugins})

    def builtins(self) -> list[T]:
        return list(self.builtin.values())
