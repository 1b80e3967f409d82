"""Model clients: OpenAI-compatible servers, the ``scripted:`` model and the router.

The fake OpenAI-compatible server for tests lives in :mod:`engine.models.fake_server`
and is not imported here (it needs aiohttp).
"""

from __future__ import annotations

from engine.models.openai_compat import ModelEndpoint, OpenAICompatClient
from engine.models.router import ModelRouter, endpoint_of
from engine.models.scripted import ScriptedModelClient, ScriptError, load_script

__all__ = [
    "ModelEndpoint",
    "ModelRouter",
    "OpenAICompatClient",
    "ScriptError",
    "ScriptedModelClient",
    "endpoint_of",
    "load_script",
]
