"""Fixtures: a fake OpenAI-compatible server on loopback and clients with tiny backoffs."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from engine.models.fake_server import FakeOpenAIServer
from engine.models.openai_compat import ModelEndpoint, OpenAICompatClient

ClientFactory = Callable[..., OpenAICompatClient]


@pytest.fixture
async def server() -> AsyncIterator[FakeOpenAIServer]:
    """A fake server answering every prompt with a fixed reply."""
    async with FakeOpenAIServer(lambda messages: "<answer>\\boxed{42}</answer>") as fake:
        yield fake


@pytest.fixture
async def make_client(server: FakeOpenAIServer) -> AsyncIterator[ClientFactory]:
    """Build clients against ``server`` with fast retries; close them afterwards."""
    clients: list[OpenAICompatClient] = []

    def build(**overrides: Any) -> OpenAICompatClient:
        fields: dict[str, Any] = {
            "base_url": server.base_url,
            "model": "fake-model",
            "timeout": 2.0,
            "max_retries": 3,
            "backoff_base": 0.001,
            "backoff_max": 0.005,
        }
        client = OpenAICompatClient(ModelEndpoint(**(fields | overrides)))
        clients.append(client)
        return client

    yield build
    for client in clients:
        await client.close()
