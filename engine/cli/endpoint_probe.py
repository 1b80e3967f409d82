"""Checking the model endpoints a run will call before it is submitted.

A run submitted against nothing listening, or a model the server does not serve, would
fail its first call and end ``model_failed``: an infrastructure fault a user could read
as a wrong answer. `solve`, `submit`, `fork` and `rollouts` probe first, from the run
settings that travel with the submission (what ``run.started`` will record), so the
check covers the endpoint the workers will call whichever process runs them.
"""

from __future__ import annotations

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
            await probe_endpoint(base_url, model, _api_key(settings, caller))
        except ProbeFailed as exc:
            msg = f"{exc}; {nothing} (--no-probe skips this check)"
            raise EngineError(msg) from exc


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
