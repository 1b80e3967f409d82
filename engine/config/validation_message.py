"""A settings validation error as the user's key reads it: ``models.policy.max_tokens must be a
whole number, got text``, not msgspec's ``Expected `int`, got `str` - at `$.models[...].max_tokens```.

msgspec writes ``[...]`` for a mapping's key; the key is found again by validating the raw
settings with that mapping cut down to one entry at a time. Values are never echoed: a
mistyped one may be a secret.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

_AT = re.compile(r"^(?P<what>.*) - at `\$(?P<path>[^`]*)`$", re.DOTALL)
_STEP = re.compile(r"\.(\w+)|\[(\d+|\.\.\.)\]")
_EXPECTED = re.compile(r"^Expected `(?P<expected>[^`]+)`(?P<bound>[^,]*)(?:, got `(?P<got>[^`]+)`)?$")
_UNKNOWN = re.compile(r"^Object contains unknown field `(?P<field>[^`]+)`$")
_MISSING = re.compile(r"^Object missing required field `(?P<field>[^`]+)`$")

_WORDS = {"int": "a whole number", "float": "a number", "str": "text", "bool": "true or false",
          "object": "a mapping", "array": "a list", "null": "empty"}


def explain(error: msgspec.ValidationError, raw: Mapping[str, Any],
            check: Callable[[Mapping[str, Any]], object]) -> str:
    """One line naming the user's key; ``check`` validates raw settings (raising the same way)."""
    text = str(error)
    found = _AT.match(text)
    if found is None:  # at the top level
        return _sentence(text, "")
    steps = _steps(found.group("path"))
    key = _resolved(steps, raw, check, found.group("path"))
    return _sentence(found.group("what"), key)


def _steps(path: str) -> list[str | int | None]:
    """``.models[...].max_tokens`` -> ``["models", None, "max_tokens"]`` (``None``: a key msgspec hides)."""
    steps: list[str | int | None] = []
    for name, index in _STEP.findall(path):
        steps.append(name if name else (None if index == "..." else int(index)))
    return steps


def _resolved(steps: list[str | int | None], raw: Mapping[str, Any], check: Callable[[Mapping[str, Any]], object],
              path: str) -> str:
    """The dotted key (``branches[0].policy``), each hidden mapping key found by trying its entries alone."""
    key = ""
    for place, step in enumerate(steps):
        found = _culprit(raw, steps[:place], check, path) if step is None else step
        key += f"[{found}]" if isinstance(found, int) else f".{found}"
    return key.removeprefix(".")


def _culprit(raw: Mapping[str, Any], where: list[str | int | None], check: Callable[[Mapping[str, Any]], object],
             path: str) -> str:
    """The first key of the mapping at ``where`` whose entry alone fails at ``path`` (``<key>`` if none does)."""
    mapping = _at(raw, where)
    if not isinstance(mapping, Mapping):
        return "<key>"
    for key in mapping:
        trial = copy.deepcopy(dict(raw))
        _put(trial, where, {key: mapping[key]})
        try:
            check(trial)
        except msgspec.ValidationError as exc:
            if f"`${path}`" in str(exc):
                return str(key)
        except Exception:  # noqa: BLE001 - another kind of failure does not point at this key
            continue
    return "<key>"


def _at(raw: Any, where: list[str | int | None]) -> Any:
    node = raw
    for step in where:
        if step is None:
            return None  # two hidden keys in one path: name the outer one only
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def _put(raw: Any, where: list[str | int | None], value: Any) -> None:
    node = raw
    for step in where[:-1]:
        node = node[step]
    node[where[-1]] = value


def _sentence(what: str, key: str) -> str:
    expected = _EXPECTED.match(what)
    if expected is not None:
        wanted = _WORDS.get(expected.group("expected"), expected.group("expected")) + expected.group("bound")
        got = expected.group("got")
        return f"{key} must be {wanted}" + (f", got {_WORDS.get(got, got)}" if got else "")
    unknown = _UNKNOWN.match(what)
    if unknown is not None:
        return f"unknown key {'.'.join(filter(None, (key, unknown.group('field'))))}"
    missing = _MISSING.match(what)
    if missing is not None:
        return f"{'.'.join(filter(None, (key, missing.group('field'))))} is required"
    # A check of our own: its message names the key already, or gets it in front.
    return what if key.split(".")[-1] in what else f"{key}: {what}"
