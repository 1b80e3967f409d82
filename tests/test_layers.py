"""The import direction engine -> replay -> handlers -> events is enforced."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ["events", "handlers", "replay", "engine"]
"""Lowest first: a package may import only packages at or below its own level."""


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package", LAYERS)
def test_package_imports_only_lower_layers(package: str) -> None:
    """No module imports a layer above its own (e.g. handlers never import engine)."""
    allowed = set(LAYERS[: LAYERS.index(package) + 1])
    forbidden = set(LAYERS) - allowed
    offenders = []
    for path in sorted((ROOT / package).rglob("*.py")):
        bad = _imports(path) & forbidden
        if bad:
            offenders.append(f"{path.relative_to(ROOT)} imports {sorted(bad)}")
    assert offenders == []


def test_events_and_handlers_do_no_io_imports() -> None:
    """The vocabulary and the deciders never import NATS, HTTP clients or structlog."""
    banned = {"nats", "httpx", "openai", "structlog", "aiohttp", "requests"}
    offenders = []
    for package in ("events", "handlers"):
        for path in sorted((ROOT / package).rglob("*.py")):
            bad = _imports(path) & banned
            if bad:
                offenders.append(f"{path.relative_to(ROOT)} imports {sorted(bad)}")
    assert offenders == []
