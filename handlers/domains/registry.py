"""The process-wide domain registry: built-ins from import, plugins installed by the engine."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from handlers.domains.base import Domain

DEFAULT_DOMAIN = "math"

_builtin: dict[str, Domain] = {}
_plugins: dict[str, Domain] = {}


def register_builtin(domain: Domain) -> None:
    domain.check()
    _builtin[domain.name] = domain


def install_plugins(domains: Iterable[Domain]) -> None:
    """Replace every plugin domain with ``domains`` (the engine does this once per load)."""
    chosen: dict[str, Domain] = {}
    for domain in domains:
        domain.check()
        if domain.name in _builtin or domain.name in chosen:
            msg = f"domain {domain.name!r} is already registered"
            raise ValueError(msg)
        chosen[domain.name] = domain
    _plugins.clear()
    _plugins.update(chosen)


def get_domain(name: str | None) -> Domain:
    """The domain a run recorded (``None``: the default).

    Raises:
        LookupError: no such domain is registered in this process (a plugin not loaded).
    """
    key = name or DEFAULT_DOMAIN
    found = _builtin.get(key) or _plugins.get(key)
    if found is None:
        msg = f"unknown domain {key!r} (registered: {', '.join(domain_names())})"
        raise LookupError(msg)
    return found


def domain_of(settings: dict[str, Any]) -> Domain:
    """The domain of a run from its recorded settings."""
    return get_domain(settings.get("episode", {}).get("domain"))


def domain_names() -> list[str]:
    return sorted({*_builtin, *_plugins})


def builtin_domains() -> list[Domain]:
    return list(_builtin.values())
