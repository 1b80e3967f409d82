"""Model calls: the request, the reply and the failure are all recorded."""

from __future__ import annotations

from typing import Literal

import msgspec

from events.base import Event

ModelFailureKind = Literal[
    "timeout", "rate_limit", "context_length", "server_error", "bad_response", "connection"
]


class ChatMessage(msgspec.Struct, frozen=True, kw_only=True):
    """One chat message as sent to an OpenAI-compatible server."""

    role: str
    content: str


Piece = str | tuple[int, int]
"""Part of a :class:`MessageDelta`: a literal text, or the ``[start, end)`` characters of
the base message (see :mod:`events.text_delta`)."""


class MessageDelta(msgspec.Struct, frozen=True, kw_only=True):
    """One chat message given by its changes from the message at the same place in a base prompt."""

    role: str
    pieces: list[Piece]


class MessagesDelta(msgspec.Struct, frozen=True, kw_only=True):
    """A list of chat messages given by its changes from a base list."""

    kept: int = 0
    """Leading messages of the base repeated unchanged (a growing chat keeps them all)."""
    messages: list[MessageDelta] = []
    """The messages after those, each against the base message at the same index (if any)."""


class PromptDelta(MessagesDelta, frozen=True, kw_only=True):
    """A prompt recorded as its changes from an earlier prompt of the same episode."""

    base_call: str
    """The ``call_id`` of the earlier ``model.call_requested`` whose prompt is the base."""


class SamplingParams(msgspec.Struct, frozen=True, kw_only=True):
    """Sampling parameters of one call."""

    temperature: float = 0.7
    top_p: float = 1.0
    top_k: int = -1
    """-1 disables top-k (vLLM rejects 0)."""
    max_tokens: int = 8192
    seed: int | None = None


class TokenUsage(msgspec.Struct, frozen=True, kw_only=True):
    """Token counts reported by the server."""

    prompt_tokens: int = 0
    completion_tokens: int = 0


class ServerTimings(msgspec.Struct, frozen=True, kw_only=True):
    """What the server says it spent on a reply (llama.cpp's ``timings``), when it says."""

    prompt_tokens: int = 0
    """Prompt tokens evaluated for this reply (a prompt cache hit is not counted here)."""
    prompt_ms: float = 0.0
    cached_tokens: int = 0
    """Prompt tokens taken from the server's cache."""
    generated_tokens: int = 0
    generated_ms: float = 0.0

    @property
    def generated_per_second(self) -> float | None:
        return self.generated_tokens * 1000 / self.generated_ms if self.generated_ms > 0 else None


class ModelCallRequested(Event, frozen=True, kw_only=True, tag="model.call_requested"):
    """A decider asked for one model completion."""

    call_id: str
    role: str
    """Which model role answers: ``policy``, ``summarizer``, ``verifier``, ``aggregator``..."""
    step: int
    messages: list[ChatMessage] = []
    """The prompt. Recorded empty when ``prompt_delta`` gives it (the wire form); readers
    of a run's history get it whole from the episode projection or
    :func:`handlers.projections.prompts.resolved_prompt`."""
    model: str
    prompt_delta: PromptDelta | None = None
    """The prompt as its changes from the episode's previous step (runs started with
    ``prompts: delta``), so a run's bytes grow linearly with its turns."""
    params: SamplingParams = SamplingParams()
    purpose: str = "act"
    """Why the call is made (``act``, ``force_answer``, ``summarize``...)."""
    branch: str | None = None
    episode: str = "main"
    """Which episode of the run (evolve runs have several: rounds, verifiers)."""


class ModelResponded(Event, frozen=True, kw_only=True, tag="model.responded"):
    """The model answered; reasoning is folded into the text as ``<think>...</think>``."""

    call_id: str
    role: str
    step: int
    text: str
    model: str
    finish_reason: str | None = None
    usage: TokenUsage | None = None
    latency_ms: float = 0.0
    attempts: int = 1
    retried: list[str] = []
    """Why each earlier attempt failed (a :data:`ModelFailureKind` each), oldest first."""
    prompt_token_ids: list[int] | None = None
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    purpose: str = "act"
    branch: str | None = None
    episode: str = "main"
    """Which episode of the run (evolve runs have several: rounds, verifiers)."""
    policy_version: int | None = None
    """The policy version that served the call: the last ``policy.activated`` for the
    role when the call was made (``None``: none was activated, or another model served)."""
    server_timings: ServerTimings | None = None
    """The server's own account of prompt and generation time (llama.cpp reports it)."""


class ModelCallFailed(Event, frozen=True, kw_only=True, tag="model.call_failed"):
    """The call did not produce a usable reply after its retries."""

    call_id: str
    role: str
    step: int
    kind: ModelFailureKind
    message: str
    attempts: int = 1
    purpose: str = "act"
    branch: str | None = None
    episode: str = "main"
    """Which episode of the run (evolve runs have several: rounds, verifiers)."""
