"""The OpenAI-compatible client against the fake server on loopback."""

from __future__ import annotations

import asyncio
import socket

import pytest

from engine.models.fake_server import CannedReply, FakeOpenAIServer
from engine.models.openai_compat import ModelEndpoint, OpenAICompatClient
from events.model import ChatMessage, SamplingParams
from handlers.ports import ModelError

from .conftest import ClientFactory

QUESTION = [ChatMessage(role="user", content="What is 6 times 7?")]


async def test_successful_call_returns_text_usage_and_attempts(
    server: FakeOpenAIServer, make_client: ClientFactory
) -> None:
    """A plain call returns the reply text, finish reason, usage and one attempt."""
    reply = await make_client().complete(QUESTION, SamplingParams())
    assert reply.text == "<answer>\\boxed{42}</answer>"
    assert reply.finish_reason == "stop"
    assert reply.attempts == 1
    assert reply.usage is not None and reply.usage.completion_tokens == len(reply.text)
    assert reply.latency_ms > 0
    assert server.requests_total == 1


async def test_sampling_parameters_are_sent(
    server: FakeOpenAIServer, make_client: ClientFactory
) -> None:
    """temperature, top_p, max_tokens and seed travel in the request body."""
    params = SamplingParams(temperature=0.3, top_p=0.9, max_tokens=77, seed=11)
    await make_client().complete(QUESTION, params)
    body = server.bodies[-1]
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["seed"]) == (
        0.3, 0.9, 77, 11,
    )  # fmt: skip
    assert body["model"] == "fake-model"


async def test_top_k_goes_in_the_extra_body_only_when_positive(
    server: FakeOpenAIServer, make_client: ClientFactory
) -> None:
    """top_k > 0 is sent; -1 and 0 are never sent (vLLM rejects 0)."""
    client = make_client(extra_body={"repetition_penalty": 1.05})
    await client.complete(QUESTION, SamplingParams(top_k=20))
    assert server.bodies[-1]["top_k"] == 20
    assert server.bodies[-1]["repetition_penalty"] == 1.05
    for off in (-1, 0):
        await client.complete(QUESTION, SamplingParams(top_k=off))
        assert "top_k" not in server.bodies[-1]


async def test_seed_and_logprobs_are_omitted_unless_asked(
    server: FakeOpenAIServer, make_client: ClientFactory
) -> None:
    """No seed, logprobs or token-id flags are sent by default, and none come back."""
    reply = await make_client().complete(QUESTION, SamplingParams())
    body = server.bodies[-1]
    assert not {"seed", "logprobs", "return_token_ids"} & body.keys()
    assert reply.token_ids is None and reply.logprobs is None and reply.prompt_token_ids is None


async def test_token_ids_and_logprobs_are_recorded_when_configured(
    make_client: ClientFactory,
) -> None:
    """With both flags on, prompt ids, completion ids and logprobs come back aligned."""
    client = make_client(return_logprobs=True, return_token_ids=True)
    reply = await client.complete(QUESTION, SamplingParams())
    assert reply.token_ids == list(reply.text.encode())
    assert reply.prompt_token_ids == list(b"user: What is 6 times 7?\n")
    assert reply.logprobs is not None and len(reply.logprobs) == len(reply.token_ids)


async def test_reasoning_content_is_folded_into_a_think_block(
    server: FakeOpenAIServer, make_client: ClientFactory
) -> None:
    """Separately returned reasoning comes back as <think>...</think> before the content."""
    server.plan(CannedReply(content="\n\n<answer>42</answer>", reasoning_content="  6*7=42 "))
    reply = await make_client().complete(QUESTION, SamplingParams())
    assert reply.text == "<think>\n6*7=42\n</think>\n<answer>42</answer>"


async def test_split_reasoning_round_trips_through_the_server() -> None:
    """A server that splits <think> off (like vLLM's parser) yields the same folded text."""
    text = "<think>\nmultiply\n</think>\n<answer>42</answer>"
    async with FakeOpenAIServer(lambda m: text, split_reasoning=True) as fake:
        client = OpenAICompatClient(ModelEndpoint(base_url=fake.base_url, model="m"))
        reply = await client.complete(QUESTION, SamplingParams())
        await client.close()
    assert reply.text == text


async def test_reasoning_without_content_is_a_reply(
    server: FakeOpenAIServer, make_client: ClientFactory
) -> None:
    """content null with reasoning (the model ran out of tokens while thinking) is kept."""
    server.plan(
        CannedReply(content=None, reasoning_content="still thinking", finish_reason="length")
    )
    reply = await make_client().complete(QUESTION, SamplingParams())
    assert reply.text == "<think>\nstill thinking\n</think>\n"
    assert reply.finish_reason == "length"


async def test_empty_content_is_a_valid_reply(
    server: FakeOpenAIServer, make_client: ClientFactory
) -> None:
    """An empty string is a reply, not an error."""
    server.plan(CannedReply(content=""))
    reply = await make_client().complete(QUESTION, SamplingParams())
    assert reply.text == ""
    assert reply.attempts == 1


async def test_unicode_is_preserved(server: FakeOpenAIServer, make_client: ClientFactory) -> None:
    """Non-ASCII text (maths symbols, CJK, emoji) comes back unchanged."""
    text = "∫₀¹ x² dx = ⅓ — 答案 \\boxed{\\tfrac{1}{3}} 🎉"
    server.plan(CannedReply(content=text))
    prompt = [ChatMessage(role="user", content="Résous ∑ n² 😀")]
    reply = await make_client().complete(prompt, SamplingParams())
    assert reply.text == text
    assert server.bodies[-1]["messages"][0]["content"] == "Résous ∑ n² 😀"


async def test_server_errors_are_retried_until_success(
    server: FakeOpenAIServer, make_client: ClientFactory
) -> None:
    """Two 500s and a 503 are retried; the fourth request succeeds."""
    server.plan("http_500", "http_500", "http_503")
    reply = await make_client(max_retries=3).complete(QUESTION, SamplingParams())
    assert reply.attempts == 4
    assert server.requests_total == 4


async def test_exhausted_retries_raise_server_error_with_attempts(
    server: FakeOpenAIServer, make_client: ClientFactory
) -> None:
    """After max_retries + 1 failed attempts the call fails as server_error."""
    server.plan(*["http_500"] * 5)
    with pytest.raises(ModelError) as caught:
        await make_client(max_retries=2).complete(QUESTION, SamplingParams())
    assert (caught.value.kind, caught.value.attempts) == ("server_error", 3)
    assert server.requests_total == 3


async def test_rate_limits_are_retried_then_reported(
    server: FakeOpenAIServer, make_client: ClientFactory
) -> None:
    """429s are retried; when they persist the failure is rate_limit."""
    server.plan("http_429")
    assert (await make_client().complete(QUESTION, SamplingParams())).attempts == 2
    server.plan(*["http_429"] * 3)
    with pytest.raises(ModelError) as caught:
        await make_client(max_retries=2).complete(QUESTION, SamplingParams())
    assert (caught.value.kind, caught.value.attempts) == ("rate_limit", 3)


async def test_timeouts_are_retried_then_reported(
    server: FakeOpenAIServer, make_client: ClientFactory
) -> None:
    """A hanging server times out on every attempt and the call fails as timeout."""
    server.plan("hang", "hang")
    with pytest.raises(ModelError) as caught:
        await make_client(timeout=0.2, max_retries=1).complete(QUESTION, SamplingParams())
    assert (caught.value.kind, caught.value.attempts) == ("timeout", 2)
    assert server.requests_total == 2


async def test_one_timeout_then_success(
    server: FakeOpenAIServer, make_client: ClientFactory
) -> None:
    """A single hang is retried and the next attempt succeeds."""
    server.plan("hang")
    reply = await make_client(timeout=0.2).complete(QUESTION, SamplingParams())
    assert reply.attempts == 2


async def test_context_length_errors_are_not_retried(
    server: FakeOpenAIServer, make_client: ClientFactory
) -> None:
    """vLLM's 400 about the maximum context length fails at once as context_length."""
    server.plan("context_length")
    with pytest.raises(ModelError) as caught:
        await make_client().complete(QUESTION, SamplingParams())
    assert (caught.value.kind, caught.value.attempts) == ("context_length", 1)
    assert "maximum context length" in caught.value.message
    assert server.requests_total == 1


async def test_a_prompt_beyond_the_servers_context_is_context_length() -> None:
    """A server with a small context rejects a long prompt; the client says context_length."""
    async with FakeOpenAIServer(max_context=100) as fake:
        client = OpenAICompatClient(ModelEndpoint(base_url=fake.base_url, model="m"))
        with pytest.raises(ModelError) as caught:
            await client.complete(QUESTION, SamplingParams(max_tokens=90))
        await client.close()
    assert caught.value.kind == "context_length"


async def test_other_bad_requests_are_not_retried(
    server: FakeOpenAIServer, make_client: ClientFactory
) -> None:
    """A 400 that is not about context fails at once as bad_response."""
    server.plan("bad_request")
    with pytest.raises(ModelError) as caught:
        await make_client().complete(QUESTION, SamplingParams())
    assert (caught.value.kind, caught.value.attempts) == ("bad_response", 1)


@pytest.mark.parametrize("fault", ["garbage_json", "empty_choices", "null_content"])
async def test_unusable_bodies_are_bad_responses(
    fault: str, server: FakeOpenAIServer, make_client: ClientFactory
) -> None:
    """Garbage JSON, no choices, or null content without reasoning fail as bad_response."""
    server.plan(fault)
    with pytest.raises(ModelError) as caught:
        await make_client().complete(QUESTION, SamplingParams())
    assert (caught.value.kind, caught.value.attempts) == ("bad_response", 1)


async def test_dropped_connections_are_retried(
    server: FakeOpenAIServer, make_client: ClientFactory
) -> None:
    """A connection closed without a reply is retried as a connection failure."""
    server.plan("drop_connection")
    reply = await make_client().complete(QUESTION, SamplingParams())
    assert reply.attempts == 2


async def test_a_connection_dropped_on_every_attempt_is_a_connection_error(
    server: FakeOpenAIServer, make_client: ClientFactory
) -> None:
    """The transport's "connect timeout" for a dropped connection is still recorded as connection."""
    server.plan("drop_connection", "drop_connection")
    with pytest.raises(ModelError) as caught:
        await make_client(max_retries=1).complete(QUESTION, SamplingParams())
    assert (caught.value.kind, caught.value.attempts) == ("connection", 2)


async def test_the_api_key_is_sent_as_a_bearer_token(
    server: FakeOpenAIServer, make_client: ClientFactory
) -> None:
    """The raw post keeps the SDK's authentication: the key goes in the Authorization header."""
    await make_client(api_key="sk-test-key").complete(QUESTION, SamplingParams())
    assert server.authorizations[-1] == "Bearer sk-test-key"


async def test_unreachable_server_is_a_connection_error(make_client: ClientFactory) -> None:
    """Nothing listening on the port: the call fails as connection after its retries."""
    client = make_client(base_url="http://127.0.0.1:9/v1", max_retries=1)
    with pytest.raises(ModelError) as caught:
        await client.complete(QUESTION, SamplingParams())
    assert (caught.value.kind, caught.value.attempts) == ("connection", 2)


async def test_concurrency_limit_is_shared_per_base_url(make_client: ClientFactory) -> None:
    """Two clients of one URL together never exceed the first client's limit."""
    async with FakeOpenAIServer(latency_ms=20) as fake:
        first = make_client(base_url=fake.base_url, max_concurrency=3)
        second = make_client(base_url=fake.base_url, max_concurrency=3, model="other")
        calls = [c.complete(QUESTION, SamplingParams()) for c in (first, second) for _ in range(12)]
        replies = await asyncio.gather(*calls)
    assert len(replies) == 24
    assert 1 < fake.max_in_flight <= 3
    assert fake.requests_by_model == {"fake-model": 12, "other": 12}


def test_one_client_works_across_event_loops() -> None:
    """A client reused by successive asyncio.run calls (CLI commands) keeps working."""

    async def serve_and_call(client: OpenAICompatClient | None) -> OpenAICompatClient:
        async with FakeOpenAIServer(port=port) as fake:
            client = client or OpenAICompatClient(ModelEndpoint(base_url=fake.base_url, model="m"))
            assert (await client.complete(QUESTION, SamplingParams())).text == "ok"
            await client.close()
        return client

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = asyncio.run(serve_and_call(None))
    asyncio.run(serve_and_call(client))


@pytest.mark.parametrize("base_url", ["not a url", "ftp://x/v1", "", "http://[::1"])
async def test_malformed_base_urls_fail_at_once_as_connection(base_url: str) -> None:
    """A URL that can never work fails on the first attempt, as a ModelError."""
    client = OpenAICompatClient(ModelEndpoint(base_url=base_url, model="m", max_retries=3))
    with pytest.raises(ModelError) as caught:
        await client.complete(QUESTION, SamplingParams())
    await client.close()
    assert (caught.value.kind, caught.value.attempts) == ("connection", 1)



async def test_a_retried_reply_records_why_each_earlier_attempt_failed(
    server: FakeOpenAIServer, make_client: ClientFactory
) -> None:
    """Two failed attempts then a reply: ``retried`` names both failures, oldest first (shown on timelines)."""
    server.plan("http_500", "http_429")
    reply = await make_client().complete(QUESTION, SamplingParams())
    assert reply.attempts == 3 and reply.retried == ["server_error", "rate_limit"]
