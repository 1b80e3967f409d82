"""Checking the model endpoints a run will call before it is submitted.

A run submitted against nothing listening, or a model the server does not serve, would
fail its first call and end ``model_failed``: an infrastructure fault a user could read
as a wrong answer. `solve`, `submit`, `fork` and `rollouts` probe first, from the run
settings that travel with the submission (what ``run.started`` will record), so the
check covers the endpoint the workers will call whichever process runs them.

Where the server says how many tokens one request may use (llama.cpp's context per slot,
vLLM's ``max_model_len``), a ``max_tokens`` above it is lowered in those settings, and said.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from engine.config.settings import Settings
from engine.errors import EngineError

EVOLVE_ROLES = ("verifier", "summarizer", "aggregator")


Caller = tuple[str, str | None]
"""Who calls an endpoint: a model role, and the evolve branch when a branch names its own model."""


def run_endpoints(run: Mapping[str, Any], workflow: str) -> list[tuple[Caller, Mapping[str, Any]]]:
    """Distinct model specs, by (base_url, model), that a run with these settings calls, and a caller of each."""
    models = run.get("models") or {}
    episode = run.get("episode") or {}

    def spec(role: str) -> Mapping[str, Any]:
        return models.get(role) or models.get("policy") or {}  # a role left out uses the policy's

    roles = ["policy"]
    roles += [role for role, key in (("rag_rewriter", "rag_rewrite_query"), ("rag_summarizer", "rag_summarize"))
              if episode.get(key)]
    specs: list[tuple[Caller, Mapping[str, Any]]] = [((role, None), spec(role)) for role in roles]
    if workflow == "evolve":
        specs += [((role, None), spec(role)) for role in EVOLVE_ROLES]
        for branch in run.get("branches") or []:
            specs += [((role, branch.get("branch_id")), branch[role])
                      for role in ("policy", "verifier") if branch.get(role)]
        default_verifier = (run.get("evolve") or {}).get("default_verifier")
        if default_verifier:
            specs.append((("default_verifier", None), default_verifier))
    unique = {(s.get("base_url"), s.get("model")): (caller, s) for caller, s in specs}
    return list(unique.values())


async def probe_run_endpoints(run: Mapping[str, Any], workflow: str, settings: Settings, *, nothing: str) -> None:
    """Raise one line unless every endpoint answers and serves its model.

    ``nothing`` says what was not done (``"nothing was submitted"``). The keys are this
    command's own (recorded settings never hold one).
    """
    # deferred: the probe pulls in openai, which `apollo --help` never needs
    from engine.models.probe import ProbeFailed, probe_endpoint

    for caller, spec in run_endpoints(run, workflow):
        model, base_url = str(spec.get("model", "")), str(spec.get("base_url", ""))
        try:
            context = await probe_endpoint(base_url, model, _api_key(settings, caller))
        except ProbeFailed as exc:
            msg = f"{exc}; {nothing} (--no-probe skips this check)"
            raise EngineError(msg) from exc
        if context is not None:
            _fit_max_tokens(run, (base_url, model), context)


def _fit_max_tokens(run: Mapping[str, Any], endpoint: tuple[str, str], context: int) -> None:
    """Lower, in the run settings, each ``max_tokens`` of this endpoint that its server cannot give."""
    # deferred: only a server that says its context is fitted
    from engine.models.server_context import fitted_max_tokens

    for spec in _model_specs(run):
        if (str(spec.get("base_url", "")), str(spec.get("model", ""))) != endpoint:
            continue
        asked = spec.get("max_tokens")
        if isinstance(asked, int) and (fitted := fitted_max_tokens(asked, context)) != asked:
            spec["max_tokens"] = fitted
            print(f"apollo: max tokens {asked} lowered to {fitted}: model {endpoint[1]!r} at {endpoint[0]} gives "
                  f"{context} tokens per request, prompt included (--max-tokens sets it)", file=sys.stderr)


def _model_specs(run: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every model spec a run's settings hold (roles, branches, the default verifier), as the dicts themselves."""
    specs = [s for s in (run.get("models") or {}).values() if isinstance(s, dict)]
    for branch in run.get("branches") or []:
        specs += [branch[role] for role in ("policy", "verifier") if isinstance(branch.get(role), dict)]
    default_verifier = (run.get("evolve") or {}).get("default_verifier")
    if isinstance(default_verifier, dict):
        specs.append(default_verifier)
    return specs


def _api_key(settings: Settings, caller: Caller) -> str:
    """The key this command holds for a caller (as the workers' router picks theirs)."""
    role, branch_id = caller
    if role == "default_verifier":
        spec = settings.evolve.default_verifier
        return spec.api_key if spec is not None else settings.model_for("verifier").api_key
    branch = next((b for b in settings.branches if b.branch_id == branch_id), None) if branch_id else None
    if branch is None:
        return settings.model_for(role).api_key
    if role == "policy":
        return branch.policy.api_key
    verifier = branch.verifier or settings.evolve.default_verifier or settings.model_for("verifier")
    return verifier.api_key


async def fit_settings_to_servers(settings: Settings) -> Settings:
    """The settings with each role's ``max_tokens`` lowered to what its server can give (said on stderr);
    unchanged where no server says its context."""
    import msgspec

    # deferred: validating and asking the server happen only when a probe runs
    from engine.config.settings import validate
    from engine.models.server_context import server_context

    raw = msgspec.to_builtins(settings)
    roles = raw.setdefault("models", {})
    roles.setdefault("policy", msgspec.to_builtins(settings.model_for("policy")))
    before = msgspec.json.encode(raw)
    contexts: dict[tuple[str, str], int | None] = {}
    for spec in roles.values():
        endpoint = (str(spec.get("base_url", "")), str(spec.get("model", "")))
        if endpoint[1].startswith("scripted:") or endpoint in contexts:
            continue
        contexts[endpoint] = await server_context(*endpoint, str(spec.get("api_key") or ""))
        if contexts[endpoint] is not None:
            _fit_max_tokens(raw, endpoint, contexts[endpoint])
    return settings if msgspec.json.encode(raw) == before else validate(raw)
