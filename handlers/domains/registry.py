"""The process-wide domain registry: built-ins from import, plugins installed by the engine."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from handlers.domains.base import Domain
from handlers.named import NamedRegistry

DEFAULT_DOMAIN = "math"

_registry: NamedRegistry[Domain] = NamedRegistry("domain")


def register_builtin(domain: Domain) -> None:
    _registry.add_builtin(domain)


def install_plugins(domains: Iterable[Domain]) -> None:
    """Replace every plugin domain with ``domains`` (the engine does this once per load)."""
    _registry.install_plugins(domains)


def get_domain(name: str | None) -> Domain:
    """The domain a run recorded (``None``: the default).

    Raises:
        LookupError: no such domain is registered in this process (a plugin not loaded).
    """
    return _registry.get(name or DEFAULT_DOMAIN)


def domain_of(settings: dict[str, Any]) -> Domain:
    """The domain of a run from its recorded settings."""
    return get_domain(settings.get("episode", {}).get("domain"))


def domain_names() -> list[str]:
    return _registry.names()


def builtin_domains() -> list[Domain]:
    return _registry.builtins()
