"""Fixtures for weight-sync tests: a fake vLLM server and adapter directories."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from engine.models.fake_server import FakeOpenAIServer


@pytest.fixture
async def vllm() -> AsyncIterator[FakeOpenAIServer]:
    """A fake OpenAI-compatible server with vLLM's runtime LoRA endpoints."""
    async with FakeOpenAIServer(lambda messages: "<answer>\\boxed{2}</answer>", models=("base",)) as server:
        yield server


@pytest.fixture
def checkpoints(tmp_path: Path) -> Path:
    """Three adapter directories, ``step-1`` to ``step-3``."""
    root = tmp_path / "ckpt"
    for step in (1, 2, 3):
        (root / f"step-{step}").mkdir(parents=True)
        (root / f"step-{step}" / "adapter_config.json").write_text("{}")
    return root
