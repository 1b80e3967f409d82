"""The model router: scripted versus OpenAI-compatible clients, settings and caching."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.models.fake_server import FakeOpenAIServer
from engine.models.openai_compat import OpenAICompatClient
from engine.models.router import ModelRouter, UnusableModelClient, endpoint_of
from engine.models.scripted import ScriptedModelClient
from events.model import ChatMessage, SamplingParams
from handlers.ports import ModelError
from handlers.run_settings import ModelSpec, RunSettingsError, run_settings_of

DEMO = "scripted:examples/scripted/demo.json"
QUESTION = [ChatMessage(role="user", content="What is 6 times 7?")]


async def test_scripted_spec_gives_a_scripted_client() -> None:
    """scripted:PATH builds a ScriptedModelClient for that role, found from the repo root."""
    router = ModelRouter()
    client = router.client_for("policy", ModelSpec(model=DEMO))
    assert isinstance(client, ScriptedModelClient)
    assert (client.model, client.role) == ("scripted:demo.json", "policy")
    assert router.client_for("policy", ModelSpec(model=DEMO)) is client
    assert router.client_for("verifier", ModelSpec(model=DEMO)) is not client
    await router.close()


async def test_missing_script_gives_a_client_that_fails_clearly(tmp_path: Path) -> None:
    """A bad scripted path does not raise in the router; the call fails as bad_response."""
    client = ModelRouter().client_for("policy", ModelSpec(model=f"scripted:{tmp_path}/none.json"))
    assert isinstance(client, UnusableModelClient)
    with pytest.raises(ModelError, match=r"none\.json") as caught:
        await client.complete(QUESTION, SamplingParams())
    assert caught.value.kind == "bad_response"


async def test_other_specs_call_the_configured_server() -> None:
    """A model name is served by an OpenAI-compatible client at the spec's base_url."""
    async with FakeOpenAIServer(lambda m: "hello") as fake:
        router = ModelRouter()
        client = router.client_for("policy", ModelSpec(model="qwen3-4b", base_url=fake.base_url, max_retries=0))
        assert isinstance(client, OpenAICompatClient)
        reply = await client.complete(QUESTION, SamplingParams())
        await router.close()
    assert reply.text == "hello"
    assert fake.requests_by_model == {"qwen3-4b": 1}


async def test_clients_are_cached_per_endpoint() -> None:
    """Roles with the same endpoint share one client; a different URL gets another."""
    router = ModelRouter()
    run = run_settings_of({"models": {"policy": {"base_url": "http://a:1/v1", "model": "p"},
                                      "verifier": {"base_url": "http://b:1/v1"}}})
    policy = router.client_for("policy", run.model_of_call("policy", None))
    assert router.client_for("summarizer", run.model_of_call("summarizer", None)) is policy
    assert router.client_for("verifier", run.model_of_call("verifier", None)) is not policy
    await router.close()


def test_role_settings_are_laid_over_the_policys() -> None:
    """A recorded role names only what differs; the rest comes from the policy section."""
    run = run_settings_of({
        "models": {
            "policy": {"base_url": "http://p/v1", "timeout": 30, "temperature": 0.4},
            "verifier": {"base_url": "http://v/v1", "max_concurrency": 8},
        }
    })
    endpoint = endpoint_of(run.model_of_call("verifier", None), api_key="k")
    assert (endpoint.base_url, endpoint.api_key, endpoint.timeout) == ("http://v/v1", "k", 30.0)
    assert endpoint.max_concurrency == 8
    assert run.model_of_call("verifier", None).temperature == 0.4


def test_missing_settings_use_reference_defaults() -> None:
    """No models section at all gives the one default local endpoint, the settings struct's."""
    endpoint = endpoint_of(run_settings_of({}).model_of_call("policy", None))
    assert (endpoint.base_url, endpoint.api_key) == (ModelSpec().base_url, "EMPTY")
    assert endpoint.base_url == "http://127.0.0.1:8000/v1"
    assert endpoint_of(ModelSpec(model="m"), api_key=None).api_key == "EMPTY"


@pytest.mark.parametrize(
    ("settings", "key"),
    [
        ({"models": {"policy": {"timeout": "soon"}}}, "models.policy"),
        ({"models": {"policy": {"max_retries": [1]}}}, "models.policy"),
        ({"models": {"verifier": {"timeout": "soon"}}}, "models.verifier"),
        ({"models": "nonsense"}, "models"),
        ({"models": {"policy": 7}}, "models"),
    ],
)
def test_garbage_model_settings_are_refused_naming_the_key(settings: dict[str, object], key: str) -> None:
    """Recorded model settings of the wrong type are one error naming the key, never a client."""
    with pytest.raises(RunSettingsError, match=key):
        run_settings_of(settings)
