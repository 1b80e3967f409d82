"""Shared fixtures: one running sandbox per test module (starting one takes ~2 s)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from engine.sandbox import PythonSandbox, SandboxConfig

REPO = Path(__file__).resolve().parents[2]
SECRET_NAME = "APOLLO_TEST_PLANTED_SECRET"
SECRET_VALUE = "s3cr3t-7f1c9e0b-do-not-leak"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sandbox() -> AsyncIterator[PythonSandbox]:
    """A started sandbox whose parent process carries a planted secret."""
    os.environ[SECRET_NAME] = SECRET_VALUE
    box = PythonSandbox(SandboxConfig(timeout_s=10, max_concurrency=4, spares=2))
    await box.start()
    try:
        yield box
    finally:
        await box.close()
        os.environ.pop(SECRET_NAME, None)


async def assert_still_serving(box: PythonSandbox) -> None:
    """The sandbox answers a trivial call correctly."""
    outcome = await box.run("print(6 * 7)", timeout=10)
    assert outcome.ok, outcome
    assert outcome.stdout == "42\n"


def as_json(text: str) -> dict:
    """Parse a tool result text."""
    return json.loads(text)


def uid_processes(uid: int) -> list[int]:
    """Host pids of live processes whose real uid is ``uid``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                for line in f:
                    if line.startswith("Uid:"):
                        if int(line.split()[1]) == uid:
                            found.append(int(entry))
                        break
        except (OSError, ValueError):
            continue
    return found


def run_cli(code: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`apollo sandbox run - ARGS` with ``code`` on stdin, as a separate process.

    Run as ``python -m engine.cli.sandbox`` (the same parser and handler as ``apollo
    sandbox``), so the test does not depend on every other CLI command importing.
    """
    return subprocess.run(
        [sys.executable, "-m", "engine.cli.sandbox", "run", "-", *args],
        cwd=REPO,
        input=code,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
