"""Finds (and caches) the model client for a role of a run: the :class:`ModelRouter` port.

The model spec decides the kind of client:

* ``scripted:PATH`` serves canned replies from a script file (see
  :mod:`engine.models.scripted`); a relative ``PATH`` is looked up from the working
  directory, then from the repository root, so ``scripted:examples/scripted/demo.json``
  works from anywhere in a checkout.
* a prefix registered in ``providers`` (e.g. ``verl:``, :mod:`engine.training.verl_loop`)
  is served by the client that provider builds for the spec;
* anything else is a served model name on an OpenAI-compatible server.

For the third kind the endpoint is the recorded :class:`handlers.run_settings.ModelSpec`
the caller picked for the role (``RunSettings.model_of_call``): base URL, model name,
timeout, retries, concurrency and what to return; the API key is the live one
(:class:`engine.app.bootstrap.KeyedModelRouter` adds it: recorded settings never hold a
secret). Sampling values travel in each ``ModelCallRequested``'s params, not here.

Policy versions: once the serving side has activated a version for a role at an endpoint
(``policy.activated``, see :mod:`engine.serving`), the client returned for that role and
endpoint stamps each reply with the version, and sends the activation's served model name
(a LoRA adapter's) instead of the configured one. The version is read per call, so a call
made before an activation carries the version it was made under.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import msgspec

from engine.models.openai_compat import ModelEndpoint, OpenAICompatClient
from engine.models.scripted import ScriptedModelClient, ScriptError
from engine.models.versioned import VersionedClient
from engine.serving.active import ActivePolicies, active_policies
from events.model import ChatMessage, SamplingParams
from handlers.ports import ModelClient, ModelError, ModelReply
from handlers.run_settings import ModelSpec

SCRIPTED_PREFIX = "scripted:"
DEFAULT_BASE_URL = ModelSpec().base_url
"""One default for every model endpoint: the recorded settings struct's."""
_REPO_ROOT = Path(__file__).resolve().parents[2]

ModelProvider = Callable[[str, str], ModelClient]
"""Builds the client for ``(role, model spec)`` of a registered prefix."""


class UnusableModelClient:
    """Stands in for a client that could not be built, so the run records why."""

    def __init__(self, message: str) -> None:
        self.message = message

    async def complete(self, messages: Sequence[ChatMessage], params: SamplingParams) -> ModelReply:
        """Always fail with the construction error (no call is made)."""
        del messages, params
        raise ModelError("bad_response", self.message)


class ModelRouter:
    """Builds one client per distinct endpoint (or script and role) and reuses it."""

    def __init__(self, *, search_root: Path | None = None, policies: ActivePolicies | None = None,
                 providers: Mapping[str, ModelProvider] | None = None) -> None:
        self._search_root = search_root or _REPO_ROOT
        self.providers: dict[str, ModelProvider] = dict(providers or {})
        """Model spec prefix -> the provider of its clients (tried before the built-in kinds)."""
        self._policies = policies if policies is not None else active_policies()
        self._openai: dict[bytes, OpenAICompatClient] = {}
        self._scripted: dict[tuple[Path, str], ModelClient] = {}

    def client_for(self, role: str, spec: ModelSpec, *, branch: str | None = None,
                   api_key: str = "EMPTY") -> ModelClient:
        """The client that serves ``role`` with the recorded ``spec`` (``branch`` does not
        change the endpoint: ``spec`` is already the branch's)."""
        del branch
        model = spec.model
        for prefix, provider in self.providers.items():
            if model.startswith(prefix):
                return provider(role, model)
        if model.startswith(SCRIPTED_PREFIX):
            return self._scripted_client(role, model.removeprefix(SCRIPTED_PREFIX))
        endpoint = endpoint_of(spec, api_key=api_key)
        active = self._policies.for_call(role, endpoint.base_url)
        if active is not None and active.served_model:
            endpoint = msgspec.structs.replace(endpoint, model=active.served_model)
        key = msgspec.json.encode(endpoint)
        client = self._openai.get(key)
        if client is None:
            client = self._openai[key] = OpenAICompatClient(endpoint)
        return client if active is None else VersionedClient(client, active.version)

    async def close(self) -> None:
        """Close every HTTP client built so far."""
        clients, self._openai = list(self._openai.values()), {}
        for client in clients:
            await client.close()

    def _scripted_client(self, role: str, spec: str) -> ModelClient:
        path = self._resolve(spec)
        key = (path, role)
        client = self._scripted.get(key)
        if client is None:
            try:
                client = ScriptedModelClient.from_file(path, role=role)
            except ScriptError as exc:  # not cached: the file may be fixed while we run
                return UnusableModelClient(str(exc))
            self._scripted[key] = client
        return client

    def _resolve(self, spec: str) -> Path:
        return resolve_scripted_path(spec, self._search_root)


def resolve_scripted_path(spec: str, search_root: Path = _REPO_ROOT) -> Path:
    """The file of ``scripted:PATH``: as given, else from ``search_root`` (the checkout)."""
    path = Path(spec).expanduser()
    if path.is_absolute() or path.exists():
        return path.resolve()
    fallback = search_root / path
    return fallback.resolve() if fallback.exists() else path.resolve()


def endpoint_of(spec: ModelSpec, *, api_key: str | None = "EMPTY") -> ModelEndpoint:
    """The OpenAI-compatible endpoint a recorded model spec names (``EMPTY`` without a key)."""
    return ModelEndpoint(base_url=spec.base_url, model=spec.model, api_key=api_key or "EMPTY",
                         timeout=spec.timeout, max_retries=spec.max_retries,
                         max_concurrency=spec.max_concurrency, return_logprobs=spec.return_logprobs,
                         return_token_ids=spec.return_token_ids)
