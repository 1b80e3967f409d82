"""The endpoint probe run before a dataset run: one clear line for every way an endpoint is unusable."""

from __future__ import annotations

import socket

import pytest

from engine.models.fake_server import FakeOpenAIServer
from engine.models.probe import ProbeFailed, probe_endpoint


def _dead_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"


async def test_a_live_server_serving_the_model_passes() -> None:
    """The fake server lists the model: no error, and no chat call is spent."""
    async with FakeOpenAIServer(models=("qwen",)) as server:
        await probe_endpoint(server.base_url, "qwen", "EMPTY")
        assert server.stats()["requests_total"] == 0


async def test_scripted_models_are_not_probed() -> None:
    """A scripted model has no endpoint to reach, so even a garbage URL passes."""
    await probe_endpoint("not a url", "scripted:examples/scripted/demo.json", "")


@pytest.mark.parametrize(("url", "fragment"), [
    ("not a url", "is not reachable"),
    ("http://[::1", "not a usable URL"),
    ("", "not"),
])  # fmt: skip
async def test_garbage_urls_are_one_line(url: str, fragment: str) -> None:
    """Malformed URLs fail with one line naming the model, never a traceback."""
    with pytest.raises(ProbeFailed) as failure:
        await probe_endpoint(url, "qwen", "EMPTY", timeout=2)
    assert "\n" not in str(failure.value)
    assert str(failure.value).startswith("model 'qwen' at")
    assert fragment in str(failure.value)


async def test_a_dead_server_is_reported() -> None:
    """Nothing listening on the port: 'not reachable', with the URL."""
    url = _dead_url()
    with pytest.raises(ProbeFailed, match=f"model 'qwen' at {url} is not reachable"):
        await probe_endpoint(url, "qwen", "EMPTY", timeout=2)


async def test_a_model_the_server_does_not_list_and_refuses_is_reported() -> None:
    """A name the server lists not and refuses when asked: the served names are in the message."""
    async with FakeOpenAIServer(models=("a", "b"), refuse_unlisted=True) as server:
        with pytest.raises(ProbeFailed, match=r"does not serve that model \(it serves: a, b\)"):
            await probe_endpoint(server.base_url, "c", "EMPTY")
        assert server.refused_names == 1


async def test_a_name_the_server_does_not_list_but_serves_passes() -> None:
    """llama.cpp serves any name: one request of one token asks, and the probe believes the answer."""
    async with FakeOpenAIServer(models=("a",)) as server:
        await probe_endpoint(server.base_url, "c", "EMPTY")
        assert server.requests_by_model == {"c": 1}
        assert server.bodies[-1]["max_tokens"] == 1


async def test_no_listing_and_no_chat_route_fails_the_probe() -> None:
    """A 404 on /models then a 404 on the chat route: the URL names no chat server."""
    async with FakeOpenAIServer(models=("a",)) as server:
        url = server.base_url.removesuffix("/v1") + "/nothing-here"
        with pytest.raises(ProbeFailed, match=r"neither /models nor /chat/completions is found there \(HTTP 404\)"):
            await probe_endpoint(url, "a", "EMPTY")


async def test_no_listing_but_a_chat_route_passes() -> None:
    """A server without /models that answers chat is alive and serving."""
    async with FakeOpenAIServer(models=("a",), listing=False) as server:
        await probe_endpoint(server.base_url, "a", "EMPTY")
        assert server.requests_total == 1
