"""Protocols the handlers need from the outside world; the engine provides adapters.

Handlers never import the engine: effectors receive these ports through the context.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Protocol

import msgspec

from events.model import ChatMessage, ModelFailureKind, SamplingParams, ServerTimings, TokenUsage
from handlers.errors import HandlerError
from handlers.run_settings import EpisodeSpec, ModelSpec


class ModelReply(msgspec.Struct, frozen=True, kw_only=True):
    """What a model client returns on success."""

    text: str
    """Reply text with reasoning folded in as ``<think>...</think>``."""
    model: str
    finish_reason: str | None = None
    usage: TokenUsage | None = None
    latency_ms: float = 0.0
    attempts: int = 1
    retried: list[str] = []
    """Why each earlier attempt failed (timeout, server_error...), oldest first."""
    prompt_token_ids: list[int] | None = None
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    policy_version: int | None = None
    """The policy version the endpoint served the call with (``None``: unversioned)."""
    server_timings: ServerTimings | None = None
    """What the server says it spent (llama.cpp's ``timings``)."""


class ModelError(HandlerError):
    """A model call failed for good (after retries); ``kind`` classifies it."""

    def __init__(self, kind: ModelFailureKind, message: str, attempts: int = 1) -> None:
        super().__init__(message)
        self.kind: ModelFailureKind = kind
        self.message = message
        self.attempts = attempts


class ModelClient(Protocol):
    """One chat completion against a configured endpoint."""

    async def complete(
        self, messages: Sequence[ChatMessage], params: SamplingParams
    ) -> ModelReply:
        """Return the reply or raise :class:`ModelError`."""
        ...


class ModelRouter(Protocol):
    """Finds the client for a role (and optional branch) of a run."""

    def client_for(self, role: str, spec: ModelSpec, *, branch: str | None = None) -> ModelClient:
        """The client that serves ``role`` with the recorded ``spec`` (its ``model`` is the
        name the request recorded); ``branch`` names the evolve branch the call belongs to."""
        ...


class ToolResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a tool returns: the JSON text shown to the model and a 0/1 score."""

    text: str
    score: float


class ToolError(HandlerError):
    """The tool could not run at all (unknown tool, infrastructure failure)."""

    def __init__(self, message: str, kind: str = "error") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind


class ToolOptions(msgspec.Struct, frozen=True, kw_only=True):
    """What a tool call may read of its run."""

    episode: EpisodeSpec = EpisodeSpec()
    """The episode settings of the calling role (a verifier's carry its own switches and
    timeout: :meth:`handlers.run_settings.RunSettings.tool_episode`)."""
    role: str = "policy"


class ToolRunner(Protocol):
    """Runs one tool call by name."""

    async def run(self, tool: str, tool_input: str, options: ToolOptions) -> ToolResult:
        """Run ``tool`` on the raw tag body; raise :class:`ToolError` if it cannot run."""
        ...


class Grade(msgspec.Struct, frozen=True, kw_only=True):
    """A grader's verdict."""

    score: float
    method: str
    detail: str = ""
    grader: str = ""
    """The grader's name, stamped by the engine's grading adapter (graders leave it blank)."""
    grader_version: str = ""
    """Digest of the grader's code and settings (:mod:`handlers.grading.version`)."""


QUESTION_KEY: Final = "question"
"""The key of a grader's metadata that holds the problem's question: the episode's grading and a regrade put it
there beside the problem's own metadata (the math grader takes from it the nouns a count may name)."""


def grading_metadata(question: str | None, metadata: dict[str, Any]) -> dict[str, Any]:
    """What a grader is handed besides the answer and the ground truth: the problem's metadata and its question."""
    return {**metadata, QUESTION_KEY: question} if question else dict(metadata)


class AnswerGrader(Protocol):
    """Compares an extracted final answer with the ground truth."""

    async def grade(
        self, answer: str, ground_truth: str, mode: str, *, metadata: dict[str, Any] | None = None
    ) -> Grade:
        """Score ``answer`` against ``ground_truth`` with grading ``mode`` (``metadata``: the problem's)."""
        ...
