"""The model router: scripted versus OpenAI-compatible clients, settings and caching."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.models.fake_server import FakeOpenAIServer
from engine.models.openai_compat import OpenAICompatClient
from engine.models.router import ModelRouter, UnusableModelClient, endpoint_for
from engine.models.scripted import ScriptedModelClient
from events.model import ChatMessage, SamplingParams
from handlers.ports import ModelError
from handlers.run_settings import ModelSpec

DEMO = "scripted:examples/scripted/demo.json"
QUESTION = [ChatMessage(role="user", content="What is 6 times 7?")]


async def test_scripted_spec_gives_a_scripted_client() -> None:
    """scripted:PATH builds a ScriptedModelClient for that role, found from the repo root."""
    router = ModelRouter()
    client = router.client_for("policy", DEMO, {})
    assert isinstance(client, ScriptedModelClient)
    assert (client.model, client.role) == ("scripted:demo.json", "policy")
    assert router.client_for("policy", DEMO, {}) is client
    assert router.client_for("verifier", DEMO, {}) is not client
    await router.close()


async def test_missing_script_gives_a_client_that_fails_clearly(tmp_path: Path) -> None:
    """A bad scripted path does not raise in the router; the call fails as bad_response."""
    client = ModelRouter().client_for("policy", f"scripted:{tmp_path}/none.json", {})
    assert isinstance(client, UnusableModelClient)
    with pytest.raises(ModelError, match=r"none\.json") as caught:
        await client.complete(QUESTION, SamplingParams())
    assert caught.value.kind == "bad_response"


async def test_other_specs_call_the_configured_server() -> None:
    """A model name is served by an OpenAI-compatible client at the role's base_url."""
    async with FakeOpenAIServer(lambda m: "hello") as fake:
        router = ModelRouter()
        settings = {"models": {"policy": {"base_url": fake.base_url, "max_retries": 0}}}
        client = router.client_for("policy", "qwen3-4b", settings)
        assert isinstance(client, OpenAICompatClient)
        reply = await client.complete(QUESTION, SamplingParams())
        await router.close()
    assert reply.text == "hello"
    assert fake.requests_by_model == {"qwen3-4b": 1}


async def test_clients_are_cached_per_endpoint() -> None:
    """Roles with the same endpoint share one client; a different URL gets another."""
    router = ModelRouter()
    settings = {
        "models": {
            "policy": {"base_url": "http://a:1/v1", "model": "p"},
            "verifier": {"base_url": "http://b:1/v1"},
        }
    }
    policy = router.client_for("policy", "p", settings)
    assert router.client_for("summarizer", "p", settings) is policy
    assert router.client_for("verifier", "p", settings) is not policy
    await router.close()


def test_role_settings_are_laid_over_the_policys() -> None:
    """A role names only what differs; the rest comes from the policy section."""
    settings = {
        "models": {
            "policy": {
                "base_url": "http://p/v1",
                "api_key": "k",
                "timeout": 30,
                "temperature": 0.4,
            },
            "verifier": {"base_url": "http://v/v1", "max_concurrency": 8},
        }
    }
    endpoint = endpoint_for("verifier", "", settings)
    assert (endpoint.base_url, endpoint.api_key, endpoint.timeout) == ("http://v/v1", "k", 30.0)
    assert endpoint.max_concurrency == 8
    assert endpoint_for("verifier", "m2", settings).model == "m2"


def test_missing_settings_use_reference_defaults() -> None:
    """No models section at all gives the one default local endpoint, the settings struct's."""
    endpoint = endpoint_for("policy", "qwen3-4b", {})
    assert (endpoint.base_url, endpoint.api_key) == (ModelSpec().base_url, "EMPTY")
    assert endpoint.base_url == "http://127.0.0.1:8000/v1"
    assert endpoint_for("policy", "m", {"models": {"policy": {"api_key": None}}}).api_key == "EMPTY"


@pytest.mark.parametrize(
    "settings",
    [
        {"models": {"policy": {"timeout": "soon"}}},
        {"models": {"policy": {"max_retries": [1]}}},
        {"models": {"policy": {"extra_body": "x"}}},
    ],
)
async def test_bad_settings_give_a_client_that_fails_clearly(settings: dict[str, object]) -> None:
    """Malformed model settings become a bad_response failure, not a crash."""
    client = ModelRouter().client_for("policy", "m", settings)
    with pytest.raises(ModelError, match="bad model settings") as caught:
        await client.complete(QUESTION, SamplingParams())
    assert caught.value.kind == "bad_response"


def test_garbage_models_sections_are_ignored() -> None:
    """A models section of the wrong type falls back to the defaults."""
    assert endpoint_for("policy", "m", {"models": "nonsense"}).base_url.startswith("http://")
    assert endpoint_for("policy", "m", {"models": {"policy": 7}}).model == "m"
