"""The built-in domains. Plugin domains join them in a run's catalog (``handlers.catalog``),
never here: deciders get their domain from the context, not from this module."""

from __future__ import annotations

from typing import Final

from handlers.domains.base import Domain
from handlers.domains.choice import MULTIPLE_CHOICE
from handlers.domains.informal_math import MATH
from handlers.named import index

DEFAULT_DOMAIN: Final = "math"
BUILTIN_DOMAINS: Final[tuple[Domain, ...]] = (MATH, MULTIPLE_CHOICE)
_BUILTIN = index("domain", BUILTIN_DOMAINS)


def get_domain(name: str | None) -> Domain:
    """The built-in domain called ``name`` (``None``: the default).

    Raises:
        LookupError: no built-in domain has that name (plugin domains are in the catalog).
    """
    found = _BUILTIN.get(name or DEFAULT_DOMAIN)
    if found is None:
        msg = f"unknown domain {name!r} (built in: {', '.join(domain_names())})"
        raise LookupError(msg)
    return found


def domain_names() -> list[str]:
    """Names of the built-in domains."""
    return sorted(_BUILTIN)


def builtin_domains() -> list[Domain]:
    return list(BUILTIN_DOMAINS)
