"""Model calls of ``verl:<run id>`` runs, carried over NATS to the agent loop that holds the sample.

verl's generation servers are reached only through the ``server_manager`` of the agent-loop
worker that runs the sample. Apollo's work queue may hand the run's ``model.call_requested``
to any worker, so every worker's router sends such calls as a NATS request to
``apollo_verl.generate.<run id>``; the agent loop that submitted the run answers it
(:func:`serve`) with its own client. Nothing is answered for a run no loop holds any more:
the call fails (``connection``) and the run records why.

Core NATS request-reply, outside the event stream's subjects: what travels here is the
request (messages, sampling parameters) and the reply, both recorded by the effector as
``model.responded`` / ``model.call_failed`` like any other call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from events.model import ChatMessage, SamplingParams
from handlers.ports import ModelClient, ModelError, ModelReply

PREFIX = "verl:"
SUBJECT_PREFIX = "apollo_verl.generate."
DEFAULT_TIMEOUT = 1800.0
"""Seconds a relayed call may take (a long generation queued behind verl's batch)."""


class RelayRequest(msgspec.Struct, frozen=True, kw_only=True):
    role: str
    messages: list[ChatMessage]
    params: SamplingParams


class RelayError(msgspec.Struct, frozen=True, kw_only=True):
    kind: str
    message: str
    attempts: int = 1


class RelayAnswer(msgspec.Struct, frozen=True, kw_only=True):
    reply: ModelReply | None = None
    error: RelayError | None = None


def subject_for(run_key: str) -> str:
    """The request subject of one sample's model calls."""
    return SUBJECT_PREFIX + run_key


def run_key_of(model: str) -> str:
    """``verl:<key>`` -> ``<key>``."""
    return model.removeprefix(PREFIX)


class RelayClient:
    """The :class:`ModelClient` a worker uses for a ``verl:`` model: one NATS request per call."""

    def __init__(self, nc: Any, role: str, model: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.nc = nc
        self.role = role
        self.model = model
        self.timeout = timeout

    async def complete(self, messages: Sequence[ChatMessage], params: SamplingParams) -> ModelReply:
        """Ask the agent loop holding the sample; its failure comes back as :class:`ModelError`."""
        import nats.errors  # deferred: the module is imported by every worker's bootstrap

        body = msgspec.json.encode(RelayRequest(role=self.role, messages=list(messages), params=params))
        subject = subject_for(run_key_of(self.model))
        try:
            message = await self.nc.request(subject, body, timeout=self.timeout)
        except nats.errors.NoRespondersError as exc:
            msg = f"no verl agent loop holds {self.model} any more (nothing answers on {subject})"
            raise ModelError("connection", msg) from exc
        except (TimeoutError, nats.errors.TimeoutError) as exc:
            msg = f"the verl agent loop of {self.model} did not answer within {self.timeout:.0f} s"
            raise ModelError("timeout", msg) from exc
        answer = msgspec.json.decode(message.data, type=RelayAnswer)
        if answer.error is not None:
            raise ModelError(answer.error.kind, answer.error.message, answer.error.attempts)  # type: ignore[arg-type]
        if answer.reply is None:
            raise ModelError("bad_response", f"the verl agent loop of {self.model} sent an empty answer")
        return answer.reply


def relay_provider(nc: Any) -> Any:
    """The router provider for ``verl:`` model specs (see :class:`engine.models.router.ModelRouter`)."""

    def provide(role: str, model: str) -> ModelClient:
        return RelayClient(nc, role, model)

    return provide


async def serve(nc: Any, run_key: str, client: ModelClient) -> Any:
    """Answer the sample's relayed calls with ``client``; returns the subscription (unsubscribe it)."""

    async def answer(message: Any) -> None:
        try:
            request = msgspec.json.decode(message.data, type=RelayRequest)
            reply = await client.complete(request.messages, request.params)
            out = RelayAnswer(reply=reply)
        except ModelError as exc:
            out = RelayAnswer(error=RelayError(kind=exc.kind, message=exc.message, attempts=exc.attempts))
        except msgspec.DecodeError as exc:
            out = RelayAnswer(error=RelayError(kind="bad_response", message=f"unreadable relayed call: {exc}"))
        except Exception as exc:  # noqa: BLE001 - the asking worker must get an answer, not a timeout
            text = f"the verl agent loop failed: {type(exc).__name__}: {exc}"[:2000]
            out = RelayAnswer(error=RelayError(kind="server_error", message=text))
        await message.respond(msgspec.json.encode(out))

    return await nc.subscribe(subject_for(run_key), cb=answer)
