"""An installed (non-editable) engine carries everything it reads at start."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_wheel_ships_the_stream_definitions(tmp_path: Path) -> None:
    """Workers apply the stream definitions at start, so the wheel must contain them."""
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    if built.returncode != 0:
        pytest.skip(f"cannot build a wheel here: {built.stderr.strip()[-300:]}")
    [wheel] = tmp_path.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in ("apollo.json", "consumers.json", "buckets.json"):
        assert f"engine/nats/stream_definitions/{name}" in names


def test_deploy_streams_is_the_packaged_copy() -> None:
    """Operators read deploy/streams; the engine reads the package: they are the same files."""
    from engine.nats.streams import DEFAULT_DEFINITIONS, Definitions

    assert (ROOT / "deploy" / "streams").resolve() == DEFAULT_DEFINITIONS.resolve()
    assert Definitions.load().stream["name"]
