"""Shared fixtures: one running sandbox per test module (starting one takes ~2 s)."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator

import pytest_asyncio

from engine.sandbox import PythonSandbox, SandboxConfig

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
