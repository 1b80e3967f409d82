"""docs/architecture.md matches the tree: every engine package is in it, everything it names exists."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
PACKAGES = ("events", "handlers", "replay", "engine")
_CODE = re.compile(r"`([^`\s]+)`")
_PATH = re.compile(r"[\w.\-]+(/[\w.\-]*)+")
_DOTTED = re.compile(r"(events|handlers|replay|engine)(\.\w+)+")


def named_paths(text: str) -> list[str]:
    return [token for token in _CODE.findall(text) if _PATH.fullmatch(token)]


def named_objects(text: str) -> list[str]:
    return [token for token in _CODE.findall(text) if _DOTTED.fullmatch(token)]


def resolves(dotted: str) -> bool:
    """Whether ``dotted`` is a module, or an attribute path under the longest importable module."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if not hasattr(target, name):
                return False
            target = getattr(target, name)
        return True
    return False


def test_every_engine_package_is_described() -> None:
    """Every engine package is described in the architecture doc."""
    text = DOC.read_text(encoding="utf-8")
    packages = sorted(p.parent.name for p in (ROOT / "engine").glob("*/__init__.py"))
    assert packages, "no engine packages found"
    assert [name for name in packages if f"`engine/{name}/`" not in text] == []


def test_every_path_the_doc_names_exists() -> None:
    """Every path the architecture doc names exists in the repository."""
    paths = named_paths(DOC.read_text(encoding="utf-8"))
    assert len(paths) > 20
    assert [path for path in paths if not (ROOT / path.rstrip("/")).exists()] == []


def test_every_module_and_function_the_doc_names_exists() -> None:
    """Every module and function the architecture doc names resolves to a real object."""
    names = named_objects(DOC.read_text(encoding="utf-8"))
    assert len(names) > 20
    assert [name for name in names if not resolves(name)] == []


@pytest.mark.parametrize(
    ("text", "paths", "objects"),
    [
        ("see `engine/cli/main.py` and `handlers.routes.ROUTES`", ["engine/cli/main.py"], ["handlers.routes.ROUTES"]),
        ('`kind="decide"` and `problem.submitted` are neither', [], []),
    ],
)
def test_the_doc_check_reads_paths_and_names(text: str, paths: list[str], objects: list[str]) -> None:
    """The doc check picks out the paths and the dotted names a text mentions."""
    assert named_paths(text) == paths
    assert named_objects(text) == objects


def test_a_missing_name_does_not_resolve() -> None:
    """A dotted name for a missing attribute or package does not resolve."""
    assert resolves("handlers.routes.ROUTES")
    assert not resolves("handlers.routes.NO_SUCH_TABLE")
    assert not resolves("engine.no_such_package.thing")
