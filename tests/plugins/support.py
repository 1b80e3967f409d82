"""Plugin packages made in a temporary directory and "installed" the way pip would.

A package's modules plus a ``<name>-<version>.dist-info`` with ``METADATA`` and
``entry_points.txt`` go into a site directory put on ``sys.path``: that is what an
installed wheel looks like to ``importlib.metadata``, with no network and no write
outside the test's tmp dir. Subprocesses see it through ``PYTHONPATH``.
"""

from __future__ import annotations

import importlib
import sys
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from textwrap import dedent

from engine.plugins import forget

ROOT = Path(__file__).resolve().parents[2]


def write_package(site: Path, dist: str, files: Mapping[str, str], entry_points: Mapping[str, str],
                  version: str = "0.1.0") -> Path:
    """Write modules (``path -> source``) and a dist-info declaring ``apollo.plugins`` entry points."""
    site.mkdir(parents=True, exist_ok=True)
    for relative, source in files.items():
        path = site / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(source))
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    lines = "".join(f"{name} = {target}\n" for name, target in entry_points.items())
    (info / "entry_points.txt").write_text(f"[apollo.plugins]\n{lines}")
    return site


def install_project(site: Path, project: Path) -> Path:
    """"Install" a real plugin project (pyproject.toml with a ``src/`` layout) into ``site``."""
    meta = tomllib.loads((project / "pyproject.toml").read_text())["project"]
    files = {str(p.relative_to(project / "src")): p.read_text() for p in (project / "src").rglob("*.py")}
    return write_package(site, meta["name"], files, meta["entry-points"]["apollo.plugins"], meta["version"])


@contextmanager
def on_path(site: Path) -> Iterator[Path]:
    """``site`` importable (and its dist-infos discoverable) for the duration; cleaned up after."""
    before = set(sys.modules)
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    forget()
    try:
        yield site
    finally:
        sys.path.remove(str(site))
        for name in set(sys.modules) - before:
            module = sys.modules.get(name)
            if str(site) in str(getattr(module, "__file__", "") or ""):
                del sys.modules[name]
        importlib.invalidate_caches()
        forget()
