"""Role passwords nats-server reads as the string they are.

auth.conf takes each role's password from the environment (``password: $APOLLO_NATS_WORKER_PASSWORD``),
and nats-server parses a variable's value as a config value, not as a string: ``12345`` or ``4K``
becomes a number, ``true`` a boolean, ``1e5x`` a parse error, and a quote, space, ``,``, ``;``,
``}``, ``]`` or backslash is read as syntax. Such a server refuses to start, or holds another
password than the clients send. A value that starts with a letter and holds only letters, digits
and ``+/=_.-`` (base64 and hex included) is read as itself; the documented generator
(``printf 'p%s\\n' "$(openssl rand -hex 24)"``) always yields one.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Mapping

ROLES = ("submitter", "worker", "trainer", "viewer", "admin")
SERVER_VARIABLES = tuple(f"APOLLO_NATS_{role.upper()}_PASSWORD" for role in ROLES)
"""The variables auth.conf reads, one per role."""
CLIENT_VARIABLE = "APOLLO_NATS_PASSWORD"

_READ_AS_ITSELF = re.compile(r"[A-Za-z][A-Za-z0-9+/=_.-]*")
_BOOLEANS = frozenset({"true", "false", "yes", "no", "on", "off"})


def new_password() -> str:
    """A role password nats-server reads as itself: ``p`` then 48 hex digits (192 random bits)."""
    return "p" + secrets.token_hex(24)


def misreading(password: str) -> str | None:
    """Why nats-server would not read ``password`` (given through auth.conf's ``$VARIABLE``) as itself,
    or None where it would."""
    if not password:
        return "it is empty"
    if password.lower() in _BOOLEANS:
        return "nats-server reads it as a boolean"
    if password[0].isdigit() or password[0] in "+-.":
        return "it starts with a digit or sign: nats-server may read it as a number (and refuse to start)"
    if _READ_AS_ITSELF.fullmatch(password) is None:
        return "it holds a character nats-server's config reads as syntax (a quote, space, , ; } ] or \\)"
    return None


def misread_passwords(environ: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """``(variable, why)`` for each role password in the environment nats-server would misread."""
    env = os.environ if environ is None else environ
    found = []
    for name in (*SERVER_VARIABLES, CLIENT_VARIABLE):
        value = env.get(name)
        why = misreading(value) if value is not None else None
        if why is not None:
            found.append((name, why))
    return found
