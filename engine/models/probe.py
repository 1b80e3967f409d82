"""One cheap request to a model endpoint before a dataset run sends it hundreds.

The probe lists the server's models (``GET {base_url}/models``, which vLLM, SGLang,
llama.cpp and OpenAI all serve). A server that cannot be reached, refuses the key or
does not serve the model stops the run with one line; a server without the listing
(404) answered, so it is taken as alive. ``scripted:`` models have no endpoint.
"""

from __future__ import annotations

import openai

from engine.errors import EngineError
from engine.models.failures import classify

PROBE_TIMEOUT_S = 10.0


class ProbeFailed(EngineError):
    """The endpoint cannot serve the run; the message is one line naming it."""


async def probe_endpoint(base_url: str, model: str, api_key: str, *, timeout: float = PROBE_TIMEOUT_S) -> None:
    """Raise :class:`ProbeFailed` unless ``base_url`` answers and serves ``model``."""
    if model.startswith("scripted:"):
        return
    where = f"model {model!r} at {base_url}"
    try:
        client = openai.AsyncOpenAI(base_url=base_url, api_key=api_key or "EMPTY", timeout=timeout, max_retries=0)
    except Exception as exc:  # noqa: BLE001 - the HTTP library's URL errors have no common base worth naming
        msg = f"{where}: not a usable URL ({type(exc).__name__}: {exc})"
        raise ProbeFailed(msg) from exc
    try:
        page = await client.models.list()
        served = [item.id for item in page.data]
    except openai.NotFoundError:
        return  # the server answered; it just has no model listing
    except openai.AuthenticationError as exc:
        msg = f"{where}: the server refused the API key ({exc.status_code})"
        raise ProbeFailed(msg) from exc
    except (openai.OpenAIError, OSError, ValueError) as exc:
        msg = f"{where} is not reachable: {classify(exc).message}"
        raise ProbeFailed(msg) from exc
    finally:
        await client.close()
    if served and model not in served:
        listed = ", ".join(served[:5]) + (", ..." if len(served) > 5 else "")
        msg = f"{where}: the server does not serve that model (it serves: {listed})"
        raise ProbeFailed(msg)
