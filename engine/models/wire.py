"""Decoding an OpenAI-compatible chat completion body into a :class:`ModelReply`.

We decode the raw bytes ourselves (msgspec, typed and lenient) instead of using the SDK's
models: it is faster, a malformed body becomes one clear ``bad_response`` failure, and
vLLM's extension fields (``prompt_token_ids``, ``token_ids``) and llama.cpp's token ids in the
logprobs are read without tricks.
"""

from __future__ import annotations

import re

import msgspec

from events.model import ServerTimings, TokenUsage
from handlers.ports import ModelError, ModelReply

_TOKEN_ID_STRING = re.compile(r"^token_id:(\d+)$")
"""vLLM's ``return_tokens_as_token_ids`` spells each logprob token like this."""


class _TokenLogprob(msgspec.Struct):
    token: str = ""
    logprob: float | None = None
    id: int | None = None
    """llama.cpp's server names each token's id here."""


class _Logprobs(msgspec.Struct):
    content: list[_TokenLogprob] | None = None


class _Message(msgspec.Struct):
    content: str | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None


class _Choice(msgspec.Struct):
    message: _Message | None = None
    finish_reason: str | None = None
    logprobs: _Logprobs | None = None
    token_ids: list[int] | None = None
    prompt_token_ids: list[int] | None = None


class _Usage(msgspec.Struct):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class _Timings(msgspec.Struct):
    """llama.cpp's ``timings`` (its own names)."""

    prompt_n: int | None = None
    prompt_ms: float | None = None
    cache_n: int | None = None
    predicted_n: int | None = None
    predicted_ms: float | None = None


class _Completion(msgspec.Struct):
    choices: list[_Choice] | None = None
    model: str | None = None
    usage: _Usage | None = None
    prompt_token_ids: list[int] | None = None
    timings: _Timings | None = None


_decoder = msgspec.json.Decoder(_Completion)


def fold_reasoning(reasoning: str | None, content: str | None) -> str:
    """Put separately returned reasoning back in front of the content as a think block."""
    text = content or ""
    if reasoning is None or not reasoning.strip():
        return text
    return f"<think>\n{reasoning.strip()}\n</think>\n{text.lstrip()}"


def decode_completion(body: bytes, default_model: str) -> ModelReply:
    """Turn a chat completion body into a reply; raise ``ModelError(bad_response)``.

    Latency and attempts are left at their defaults for the caller to fill in.
    """
    try:
        completion = _decoder.decode(body)
    except msgspec.DecodeError as exc:
        msg = f"the server's reply is not a chat completion: {exc}"
        raise ModelError("bad_response", msg) from exc
    if not completion.choices:
        raise ModelError("bad_response", "the server's reply has no choices")
    choice = completion.choices[0]
    message = choice.message or _Message()
    reasoning = message.reasoning_content or message.reasoning
    if message.content is None and not (reasoning and reasoning.strip()):
        raise ModelError("bad_response", "the server's reply has neither content nor reasoning")
    logprobs = _logprob_values(choice.logprobs)
    return ModelReply(
        text=fold_reasoning(reasoning, message.content),
        model=completion.model or default_model,
        finish_reason=choice.finish_reason,
        usage=_usage(completion.usage),
        prompt_token_ids=choice.prompt_token_ids or completion.prompt_token_ids,
        token_ids=choice.token_ids or _ids_from_logprob_tokens(choice.logprobs),
        logprobs=logprobs,
        server_timings=_timings(completion.timings),
    )


def _timings(timings: _Timings | None) -> ServerTimings | None:
    if timings is None:
        return None
    return ServerTimings(prompt_tokens=timings.prompt_n or 0, prompt_ms=timings.prompt_ms or 0.0,
                         cached_tokens=timings.cache_n or 0, generated_tokens=timings.predicted_n or 0,
                         generated_ms=timings.predicted_ms or 0.0)


def _usage(usage: _Usage | None) -> TokenUsage | None:
    if usage is None:
        return None
    return TokenUsage(
        prompt_tokens=usage.prompt_tokens or 0,
        completion_tokens=usage.completion_tokens or 0,
    )


def _logprob_values(logprobs: _Logprobs | None) -> list[float] | None:
    if logprobs is None or not logprobs.content:
        return None
    return [item.logprob if item.logprob is not None else 0.0 for item in logprobs.content]


def _ids_from_logprob_tokens(logprobs: _Logprobs | None) -> list[int] | None:
    """Token ids from the logprobs, when every token has one: llama.cpp's ``id`` field, or vLLM's
    ``token_id:N`` spelling."""
    if logprobs is None or not logprobs.content:
        return None
    ids: list[int] = []
    for item in logprobs.content:
        if item.id is not None:
            ids.append(item.id)
            continue
        match = _TOKEN_ID_STRING.match(item.token)
        if match is None:
            return None
        ids.append(int(match.group(1)))
    return ids
