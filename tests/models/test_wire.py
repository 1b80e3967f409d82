"""Decoding chat completion bodies, including garbage and server extensions."""

from __future__ import annotations

import json

import pytest

from engine.models.wire import decode_completion, fold_reasoning
from handlers.ports import ModelError


def _body(message: dict[str, object], **extra: object) -> bytes:
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    return json.dumps({"choices": [choice | extra.pop("choice", {})], **extra}).encode()


def test_vllm_token_id_fields_are_read_from_response_and_choice() -> None:
    """prompt_token_ids (top level or on the choice) and token_ids are recorded."""
    top = decode_completion(
        _body({"content": "hi"}, prompt_token_ids=[1, 2], choice={"token_ids": [7]}), "m"
    )
    assert (top.prompt_token_ids, top.token_ids) == ([1, 2], [7])
    on_choice = decode_completion(_body({"content": "hi"}, choice={"prompt_token_ids": [3]}), "m")
    assert on_choice.prompt_token_ids == [3]


def test_token_ids_from_logprob_tokens_only_when_all_are_ids() -> None:
    """vLLM's token_id:N logprob tokens give ids; ordinary tokens give none."""
    ids = {"content": [{"token": "token_id:5", "logprob": -1.0}, {"token": "token_id:9"}]}
    reply = decode_completion(_body({"content": "ab"}, choice={"logprobs": ids}), "m")
    assert (reply.token_ids, reply.logprobs) == ([5, 9], [-1.0, 0.0])
    words = {"content": [{"token": "a", "logprob": -0.5}]}
    assert (
        decode_completion(_body({"content": "a"}, choice={"logprobs": words}), "m").token_ids
        is None
    )


def test_reasoning_field_name_variants_are_folded() -> None:
    """Both reasoning_content and reasoning are folded; blank reasoning is dropped."""
    for key in ("reasoning_content", "reasoning"):
        reply = decode_completion(_body({"content": "x", key: "why"}), "m")
        assert reply.text == "<think>\nwhy\n</think>\nx"
    assert fold_reasoning("   ", "x") == "x"
    assert fold_reasoning(None, None) == ""


def test_model_name_falls_back_to_the_configured_one() -> None:
    """A body without a model name reports the endpoint's model."""
    assert decode_completion(_body({"content": "x"}), "configured").model == "configured"


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"not json",
        b"[]",
        b'{"choices": "nope"}',
        b'{"choices": [{"message": {"content": 5}}]}',
        b'{"choices": [{"message": null}]}',
        b'{"choices": null}',
        b'{"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": "many"}}',
        "\udcff".encode("utf-8", "surrogatepass"),
    ],
)
def test_garbage_bodies_raise_bad_response(body: bytes) -> None:
    """Anything that is not a usable completion is one clear bad_response error."""
    with pytest.raises(ModelError) as caught:
        decode_completion(body, "m")
    assert caught.value.kind == "bad_response"


def test_null_usage_fields_are_zero() -> None:
    """Servers that send null token counts do not break decoding."""
    body = _body({"content": "x"}, usage={"prompt_tokens": None, "completion_tokens": 3})
    usage = decode_completion(body, "m").usage
    assert usage is not None and (usage.prompt_tokens, usage.completion_tokens) == (0, 3)


def test_llama_cpp_timings_are_read_and_other_servers_have_none() -> None:
    """llama.cpp's ``timings`` become the reply's server timings (its names mapped); a body without
    them (vLLM, OpenAI) has none."""
    timings = {"prompt_n": 12, "prompt_ms": 30.5, "cache_n": 4, "predicted_n": 8, "predicted_ms": 80.0,
               "predicted_per_second": 100.0}
    body = {"choices": [{"message": {"content": "5"}, "finish_reason": "stop"}], "timings": timings}
    reply = decode_completion(json.dumps(body).encode(), "m")
    assert reply.server_timings is not None
    assert (reply.server_timings.prompt_tokens, reply.server_timings.cached_tokens,
            reply.server_timings.generated_tokens) == (12, 4, 8)
    assert reply.server_timings.generated_per_second == 100.0
    plain = {"choices": [{"message": {"content": "5"}}]}
    assert decode_completion(json.dumps(plain).encode(), "m").server_timings is None
