"""No project module or package is named like a standard-library module.

A module called ``logging.py`` or ``inspect.py`` reads as the standard library at every
import site and shadows it outright for scripts run from its folder.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("events", "handlers", "replay", "engine")


def module_names(root: Path, package: str) -> dict[str, str]:
    """Each module and package under ``root/package``: path -> its last name part."""
    found: dict[str, str] = {}
    for path in sorted((root / package).rglob("*.py")):
        relative = path.relative_to(root)
        if "__pycache__" in relative.parts:
            continue
        for index in range(1, len(relative.parts)):
            folder = Path(*relative.parts[:index])
            found.setdefault(str(folder), relative.parts[index - 1])
        if path.stem != "__init__":
            found[str(relative)] = path.stem
    return found


def shadowing(root: Path) -> list[str]:
    return sorted(
        f"{path} ({name})"
        for package in PACKAGES
        for path, name in module_names(root, package).items()
        if name in sys.stdlib_module_names
    )


def test_no_module_or_package_shadows_the_standard_library() -> None:
    """No project module or package is named like a standard library module."""
    assert shadowing(ROOT) == []


def test_a_module_or_package_named_like_the_standard_library_is_reported(tmp_path: Path) -> None:
    """A module or package named like a standard library module is reported."""
    (tmp_path / "engine" / "app").mkdir(parents=True)
    (tmp_path / "engine" / "app" / "logging.py").write_text("")
    (tmp_path / "handlers" / "json").mkdir(parents=True)
    (tmp_path / "handlers" / "json" / "__init__.py").write_text("")
    (tmp_path / "handlers" / "json" / "wire.py").write_text("")
    assert shadowing(tmp_path) == [
        f"{Path('engine/app/logging.py')} (logging)",
        f"{Path('handlers/json')} (json)",
    ]
