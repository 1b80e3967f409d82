"""The recorded run settings (``RunStarted.settings``), typed: what every decider reads.

The structs here hold the one copy of each run setting's default: the engine's
configuration (``engine.config.settings``) subclasses them, adding only what never
reaches a run (API keys, dataset-command keys) and its stricter checks.

Recorded runs are immutable, so decoding is lenient where it must be: keys this version
does not know are ignored and missing ones take their defaults (old logs replay). A value
of the wrong type is a :class:`RunSettingsError` naming the key. A run's settings are
decoded once, where the worker's history cache first sees its ``run.started``
(``engine.runtime.histories``), and carried on the handler context
(:meth:`handlers.context.HandlerContext.run_settings`); :func:`run_settings_of` itself
decodes every time it is called, so its callers keep what it returns.

Only typed values cross the ports: a model call's :class:`ModelSpec` (what
:meth:`RunSettings.model_of_call` picks for its role and branch) and a tool call's
:class:`EpisodeSpec` (what :meth:`RunSettings.tool_episode` gives its role).

A role's recorded section is laid over the policy's, key by key, when decoded: a hand-written
history may name only what differs (the engine records every key).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

import msgspec

from handlers.errors import HandlerError

Count = Annotated[int, msgspec.Meta(ge=0)]
Positive = Annotated[int, msgspec.Meta(ge=1)]


class RunSettingsError(HandlerError, ValueError):
    """A run's recorded settings hold a value of the wrong type or out of range."""


class ModelSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One model role's recorded endpoint and sampling parameters (never its API key)."""

    model: str = ""
    """The engine's configuration sets a default model; a recording without one names none."""
    base_url: str = "http://127.0.0.1:8000/v1"
    temperature: float = 0.7
    top_p: float = 1.0
    top_k: int = -1
    max_tokens: int = 8192
    timeout: float = 300.0
    max_retries: int = 5
    max_concurrency: int = 64
    system_prompt: str | None = None
    return_token_ids: bool = False
    return_logprobs: bool = False


class EpisodeSpec(msgspec.Struct, frozen=True, kw_only=True):
    """How one reasoning episode runs (``episode``)."""

    max_steps: int = 4
    history_length: int = 4
    enable_python_code: bool = True
    enable_local_rag: bool = False
    python_code_timeout: float = 30.0
    prompt_layout: Literal["fresh", "chat"] = "fresh"
    """How the policy sees its earlier steps (protocol ``apollo`` only): ``fresh`` renders one
    new user message each turn with the last ``history_length`` steps inside; ``chat`` keeps
    every reply and observation as chat messages, so each prompt continues the one before
    (what a token-level trainer needs to train every turn; see docs/training.md)."""
    protocol: str = "apollo"
    """How episodes end and what is graded (docs/protocols.md): ``apollo`` (an invalid
    reply gets an error and another turn), or the reference's test (``reference_test``)
    or evolving (``reference_evolve``) environment, for numbers comparable with its own."""
    grading: str | None = None
    """Grader name (``math``, ``math_verify``, ``reference``, ``reference_evolve``, ``exact``,
    ``choice`` or a plugin's); ``None``: the protocol's (``reference`` for reference_test,
    ``reference_evolve`` for reference_evolve), else the domain's. Checked at start-up."""
    force_answer: bool = True
    """Use the answer-only prompt on the last step."""
    rag_top_k: int = 3
    rag_rewrite_query: bool = False
    """Before a local_rag search, have the ``rag_rewriter`` model (default: the policy's
    endpoint) turn the query into documentation terms; recorded as a model call."""
    rag_summarize: bool = False
    """After a local_rag search, have the ``rag_summarizer`` model condense the hits into
    the observation; recorded as a model call. An empty or failed summary keeps the hits."""
    domain: str = "math"
    """Task domain: prompts, answer extraction and default grader (``math``, ``multiple_choice``, plugins)."""
    tools: list[str] | None = None
    """Tool tags offered to the policy; ``None``: the domain's tools (subject to the enable
    flags) plus every plugin tool."""
    reward: str = "default"
    """Reward function of sealed trajectories (``handlers.rewards``; plugins add more)."""
    invalid_turn_penalty: float = 0.0
    """Subtracted from the default reward per invalid turn."""
    min_reward: float = 0.0
    """Floor of the default reward when penalties apply."""


class VerifierEpisodeSpec(msgspec.Struct, frozen=True, kw_only=True):
    """How each verifier episode of the evolve workflow runs (the reference's ``verifier_env``)."""

    max_steps: Positive = 4
    history_length: Count = 4
    enable_python_code: bool = True
    enable_local_rag: bool = False
    python_code_timeout: float = 30.0
    memory_type: Literal["simple"] = "simple"
    """Per-step history: the most recent ``history_length`` steps (the only kind offered)."""

    @property
    def tools(self) -> list[str]:
        tools = ["python_code"] if self.enable_python_code else []
        return [*tools, "local_rag"] if self.enable_local_rag else tools


class EvolveSpec(msgspec.Struct, frozen=True, kw_only=True):
    """The self-evolution workflow (see docs/evolve.md)."""

    rounds: Positive = 10
    """Evolve rounds per problem (reference ``evolving_round``)."""
    verifiers: Positive = 5
    """Verifier episodes per round (reference ``verifier_env_num``)."""
    scored_history_length: Count = 3
    """Earlier attempts shown to the policy each round."""
    solution_memory: Literal["ndimensional", "score", "simple", "search"] = "ndimensional"
    """How earlier attempts are chosen from memory."""
    retrieval: Literal["min_combined", "random"] = "min_combined"
    """Strategy of the ndimensional memory."""
    step_memory: Literal["simple"] = "simple"
    """Per-step history of the policy (reference ``memory_type``); only ``simple``."""
    enable_verify: bool = True
    summarize: bool = True
    aggregate: bool = True
    """Merge the majority's reports with the aggregator model when there are several."""
    format_retries: Count = 5
    """Report-only retries per verifier whose reply has no valid report."""
    tie: Literal["reject", "accept", "first"] = "reject"
    """Verdict on an even split: 0, 1, or verifier 0's verdict."""
    final_answer: Literal["best_vote", "last", "reference"] = "best_vote"
    """The run's answer: ``best_vote`` (the round most verifiers approved, latest on a tie),
    ``last`` (the last round), or ``reference`` (the reference's K-branch choice: each
    branch's last round, the best by verdict, then by its rounds' ground-truth success)."""
    verifier_episode: VerifierEpisodeSpec = VerifierEpisodeSpec()
    default_verifier: ModelSpec | None = None
    """Verifier of branches that name none (reference ``default_verifier_cfg``)."""
    branch_max_workers: Count = 0
    """Branches running at once (0: all)."""
    verifier_max_workers: Count = 0
    """Verifier episodes of a round in flight at once (0: all); the others start as reports arrive."""

    def initial_verifiers(self) -> range:
        """Verifier episodes started with the round; the rest start as others report."""
        cap = self.verifier_max_workers
        return range(self.verifiers if cap <= 0 else min(cap, self.verifiers))

    def waiting_verifier(self, reported: int) -> int | None:
        """The verifier the ``reported``-th report of a round starts, if any waits.

        The k-th report (in stream order) starts verifier ``cap + k - 1``, so concurrent
        reports never start the same verifier twice and at most ``cap`` run at once.
        """
        cap = self.verifier_max_workers
        index = cap + reported - 1
        return index if cap > 0 and index < self.verifiers else None


class BranchSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One branch of a multi-model evolve run."""

    branch_id: str
    policy: ModelSpec | None = None
    """``None``: the run's policy (the engine's configuration always records one)."""
    verifier: ModelSpec | None = None


class RunSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Everything a run recorded for its deciders."""

    episode: EpisodeSpec = EpisodeSpec()
    models: dict[str, ModelSpec] = {}
    """Per role; a role without a section uses the policy's."""
    evolve: EvolveSpec = EvolveSpec()
    branches: list[BranchSpec] = []
    tool_usage: dict[str, str] = {}
    """Prompt text per enabled tool tag, fixed when the run started."""
    extensions: dict[str, dict[str, str]] = {}
    """``{kind: {name: plugin}}`` for each plugin domain, grader or reward the run uses."""
    def model_for(self, role: str) -> ModelSpec:
        """The recorded model of ``role``: its own section, else the policy's."""
        return self.models.get(role) or self.models.get("policy") or _NO_MODEL

    @property
    def branch_ids(self) -> tuple[str | None, ...]:
        """The evolve branches in config order; ``(None,)`` for a run without branches."""
        return tuple(b.branch_id for b in self.branches) or (None,)

    def branch_spec(self, branch_id: str) -> BranchSpec | None:
        return next((b for b in self.branches if b.branch_id == branch_id), None)

    def role_models(self, branch: str | None) -> dict[str, ModelSpec]:
        """The model per evolve role for a branch (``None``: the run's own models).

        A branch names its policy and optionally its verifier; a branch without one uses
        ``evolve.default_verifier``, else the run's verifier. The summarizer and the
        aggregator use the branch's verifier model (as the reference does).
        """
        policy = self.models.get("policy") or _NO_MODEL
        verifier = self.models.get("verifier") or policy
        if branch is None:
            return {"policy": policy, "verifier": verifier,
                    "summarizer": self.models.get("summarizer") or verifier,
                    "aggregator": self.models.get("aggregator") or verifier}
        spec = self.branch_spec(branch)
        branch_verifier = (spec.verifier if spec else None) or self.evolve.default_verifier or verifier
        return {"policy": (spec.policy if spec else None) or policy, "verifier": branch_verifier,
                "summarizer": branch_verifier, "aggregator": branch_verifier}

    def model_of_call(self, role: str, branch: str | None) -> ModelSpec:
        """The model that serves a call of ``role``: within a branch, the branch's model of
        that evolve role (a helper role, ``rag_rewriter``..., uses the branch's policy);
        outside one, the role's own section, else the policy's."""
        if branch is None:
            return self.model_for(role)
        models = self.role_models(branch)
        return models.get(role) or models["policy"]

    def tool_episode(self, role: str) -> EpisodeSpec:
        """The episode settings a tool call of ``role`` runs under.

        A verifier's tool calls obey the verifier episode's own switches and timeout (the
        reference's ``verifier_env``), not the policy's: python off for the policy and on
        for the verifiers still runs the verifiers' code.
        """
        if role != "verifier":
            return self.episode
        verifier = self.evolve.verifier_episode
        return msgspec.structs.replace(
            self.episode, enable_python_code=verifier.enable_python_code,
            enable_local_rag=verifier.enable_local_rag, python_code_timeout=verifier.python_code_timeout,
            tools=verifier.tools)


_NO_MODEL = ModelSpec()


def run_settings_of(settings: Mapping[str, Any]) -> RunSettings:
    """The typed view of a run's recorded settings (decoded anew on each call: keep it).

    Raises:
        RunSettingsError: a recorded value has the wrong type or is out of range.
    """
    try:
        return msgspec.convert(_roles_over_policy(settings), RunSettings, strict=False)
    except msgspec.ValidationError as exc:
        raise RunSettingsError(f"recorded run settings are invalid: {_naming_role(settings, exc)}") from exc


def recorded_run_settings(settings: Mapping[str, Any]) -> RunSettings | None:
    """The typed settings a reader shows: ``None`` when the recording does not decode (a
    reader names what it cannot read instead of failing)."""
    try:
        return run_settings_of(settings)
    except RunSettingsError:
        return None


def recorded_policy_model(settings: Mapping[str, Any]) -> str | None:
    """The policy's model name in recorded settings, ``None`` when unnamed or unreadable."""
    run = recorded_run_settings(settings)
    return (run.model_for("policy").model or None) if run is not None else None


def _roles_over_policy(settings: Mapping[str, Any]) -> Mapping[str, Any]:
    """The recorded mapping with each role's model section laid over the policy's."""
    models = settings.get("models")
    if not isinstance(models, Mapping) or not isinstance(policy := models.get("policy"), Mapping):
        return settings
    merged = {role: {**policy, **section} if isinstance(section, Mapping) else section
              for role, section in models.items()}
    return {**settings, "models": merged}


def _naming_role(settings: Mapping[str, Any], error: msgspec.ValidationError) -> str:
    """msgspec's message, with the model role in place of ``[...]`` (it does not name dict keys)."""
    text = str(error)
    models = settings.get("models")
    if "$.models[...]" not in text or not isinstance(models, Mapping):
        return text
    for role, spec in models.items():
        try:
            msgspec.convert(spec, ModelSpec, strict=False)
        except msgspec.ValidationError:
            return text.replace("$.models[...]", f"$.models.{role}")
    return text

