"""One cheap request to a model endpoint before a dataset run sends it hundreds.

The probe lists the server's models (``GET {base_url}/models``, which vLLM, SGLang,
llama.cpp and OpenAI all serve). A server that cannot be reached or refuses the key stops
the run with one line. A name the listing lacks is not refused on the listing's word
(a server may serve names it does not list): one chat request of one token asks the server,
and its refusal stops the run, saying what the server lists. So does a reply made by a model
the listing names instead: llama.cpp answers any name with its one model, and a run would be
recorded under a name that never answered. A server without the listing (404)
is asked the same way, and a 404 there too means the URL names no chat server.
``scripted:`` models have no endpoint.
"""

from __future__ import annotations

from typing import Any

import openai

from engine.errors import EngineError
from engine.models.failures import classify
from engine.models.server_context import listed_context, props_context

PROBE_TIMEOUT_S = 10.0


class ProbeFailed(EngineError):
    """The endpoint cannot serve the run; the message is one line naming it."""


async def probe_endpoint(
    base_url: str, model: str, api_key: str, *, timeout: float = PROBE_TIMEOUT_S
) -> int | None:
    """Raise :class:`ProbeFailed` unless ``base_url`` answers and serves ``model``; return the
    context one request may use where the server says it (:mod:`engine.models.server_context`)."""
    if model.startswith("scripted:"):
        return None
    where = f"model {model!r} at {base_url}"
    try:
        client = openai.AsyncOpenAI(base_url=base_url, api_key=api_key or "EMPTY", timeout=timeout, max_retries=0)
    except Exception as exc:  # the HTTP library's URL errors have no common base worth naming
        msg = f"{where}: not a usable URL ({type(exc).__name__}: {exc})"
        raise ProbeFailed(msg) from exc
    try:
        entries = await _listed(client, where)
        served = None if entries is None else [str(e.get("id")) for e in entries]
        if served is None:
            await _ask(client, model, where, "the server has no /models listing")
        elif model not in served:
            listed = ", ".join(served[:5]) + (", ..." if len(served) > 5 else "")
            why = f"the server does not serve that model (it serves: {listed})"
            answered_as = await _ask(client, model, where, why)
            if answered_as != model and answered_as in served:
                msg = f"{where}: {why}; asked for it, {answered_as!r} answered: use --model {answered_as}"
                raise ProbeFailed(msg)
        context = listed_context(entries or [], model)
        return context if context is not None else await props_context(client)
    finally:
        await client.close()


async def _listed(client: openai.AsyncOpenAI, where: str) -> list[dict[str, Any]] | None:
    """The entries ``/models`` lists, or None where the server has no listing (404)."""
    try:
        page = await client.models.list()
    except openai.NotFoundError:
        return None
    except openai.AuthenticationError as exc:
        msg = f"{where}: the server refused the API key ({exc.status_code})"
        raise ProbeFailed(msg) from exc
    except (openai.OpenAIError, OSError, ValueError) as exc:
        msg = f"{where} is not reachable: {classify(exc).message}"
        raise ProbeFailed(msg) from exc
    return [item.model_dump() for item in page.data]


async def _ask(client: openai.AsyncOpenAI, model: str, where: str, why: str) -> str | None:
    """One chat request of one token; raise with ``why`` if the server refuses it, else return
    the model its reply names (None when the server is only busy).

    A refusal is a 4xx other than 408/429 (a busy or slow server has not refused the
    name); a 404 is named as a wrong URL when the listing was missing too.
    """
    messages: list = [{"role": "user", "content": "Say OK."}]
    try:
        reply = await client.chat.completions.create(model=model, messages=messages, max_tokens=1)
    except openai.NotFoundError as exc:
        if why.startswith("the server has no"):
            msg = (f"{where}: neither /models nor /chat/completions is found there (HTTP 404): "
                   "is the URL right? an OpenAI-compatible one usually ends in /v1")
        else:
            msg = f"{where}: {why}"
        raise ProbeFailed(msg) from exc
    except openai.APIStatusError as exc:
        if exc.status_code in (408, 429) or exc.status_code >= 500:
            return None
        msg = f"{where}: {why}; asked directly it answered {classify(exc).message}"
        raise ProbeFailed(msg) from exc
    except (openai.OpenAIError, OSError, ValueError) as exc:
        msg = f"{where} is not reachable: {classify(exc).message}"
        raise ProbeFailed(msg) from exc
    return reply.model
