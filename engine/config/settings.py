"""Settings: defaults, then a YAML/TOML file, then ``APOLLO_*`` environment variables.

This is the only module that reads the environment. The reference system's config
keys (``env.config.max_steps``, ``policy_model_cfg``, ``verifier_cfg``, ``run.*``...)
are translated by :mod:`engine.config.reference` before validation.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
import yaml

from engine.config.merge import deep_merge
from engine.config.reference import translate
from engine.errors import ConfigError
from handlers.episode.protocol import PROTOCOLS


class ModelSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One model role's endpoint and sampling parameters."""

    model: str = "scripted:examples/scripted/demo.json"
    base_url: str = "http://127.0.0.1:8000/v1"
    api_key: str = "EMPTY"
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


class EpisodeSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How one reasoning episode runs."""

    max_steps: int = 4
    history_length: int = 4
    enable_python_code: bool = True
    enable_local_rag: bool = False
    python_code_timeout: float = 30.0
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

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            msg = f"episode.protocol: unknown protocol {self.protocol!r} (allowed: {', '.join(PROTOCOLS)})"
            raise ValueError(msg)


Count = Annotated[int, msgspec.Meta(ge=0)]
Positive = Annotated[int, msgspec.Meta(ge=1)]


class VerifierEpisodeSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How each verifier episode of the evolve workflow runs (the reference's ``verifier_env``)."""

    max_steps: Positive = 4
    history_length: Count = 4
    enable_python_code: bool = True
    enable_local_rag: bool = False
    python_code_timeout: float = 30.0
    memory_type: Literal["simple"] = "simple"
    """Per-step history: the most recent ``history_length`` steps (the only kind offered)."""


class EvolveSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The self-evolution workflow (see docs/evolve.md)."""

    rounds: Positive = 10
    """Evolve rounds per problem (reference ``evolving_round``)."""
    test_times: Positive = 1
    """Passes over the dataset (reference ``run.test_times``); ``apollo run --samples`` wins."""
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
    verifier_episode: VerifierEpisodeSettings = VerifierEpisodeSettings()
    default_verifier: ModelSettings | None = None
    """Verifier of branches that name none (reference ``default_verifier_cfg``)."""
    branch_max_workers: Count = 0
    """Branches running at once (0: all)."""
    verifier_max_workers: Count = 0
    """Verifier episodes of a round in flight at once (0: all); the others start as reports arrive."""
    problem_max_workers: Count = 0
    """Runs in flight in ``apollo run --workflow evolve`` when ``--concurrency`` is not given (0: its default)."""


class BranchSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One branch of a multi-model evolve run."""

    branch_id: str
    policy: ModelSettings = ModelSettings()
    verifier: ModelSettings | None = None


class DatasetSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What ``apollo run`` runs when its flags do not say (reference ``run.*`` / ``env.rollout.n``)."""

    path: str | None = None
    """Dataset file used when ``--dataset`` is not given."""
    data_root: str | None = None
    dataset_name: str | None = None
    file_name: str | None = None
    """Reference ``run.*`` keys: without ``path``, the dataset is ``data_root/dataset_name/file_name``."""
    samples: Annotated[int, msgspec.Meta(ge=1)] | None = None
    """Samples per problem, the GRPO group size (reference ``env.rollout.n``); ``--samples`` wins."""


_NATS_URL = re.compile(r"(?:nats|tls|ws|wss)://(?:[^\s@/]+@)?(?:\[[0-9a-f:.]+\]|[^\s:/@,\[\]]+)(?::\d{1,5})?/?",
                       re.IGNORECASE)
"""One server of ``nats.url``: a scheme nats-py dials, a host without spaces, an optional port."""


class NatsSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    url: str | None = None
    """None: use (or, for ``apollo up``, start) the embedded server."""
    store_dir: str | None = None
    """Embedded server's JetStream store (default: the user's data dir)."""
    replicas: int | None = None
    inline_limit: int = 256 * 1024
    """Event bodies above this many bytes go to the Object Store."""
    max_event_bytes: int = 8 * 1024 * 1024
    fsync_always: bool = False
    """Embedded server only: fsync every write before acknowledging (survives power loss)."""
    ack_wait: float = 6.0
    """Seconds before an unacknowledged delivery is redelivered: how long a dead worker's
    events wait. Live workers signal in-progress every third of it (docs/workers.md)."""
    creds_file: str | None = None
    """NATS credentials file (JWT and NKey seed) of this process's role (deploy/README.md)."""
    nkey_seed_file: str | None = None
    """File holding an NKey seed (``SU...``) to sign the server's challenge with."""
    user: str | None = None
    password: str | None = None
    """With ``user``: a role user of deploy/nats/auth.conf. Never logged or recorded."""
    token: str | None = None
    ca_file: str | None = None
    """PEM CA bundle the server's certificate must chain to; setting it requires TLS."""
    cert_file: str | None = None
    key_file: str | None = None
    """Client certificate and key for servers that verify clients (mutual TLS)."""
    tls_hostname: str | None = None
    """Name to check the server's certificate against (default: the URL's host)."""
    connect_timeout: float = 5.0
    """Seconds a command tries to reach NATS before it gives up with one line naming the URL."""

    def __post_init__(self) -> None:
        if not 0 < self.connect_timeout <= 3600:  # noqa: PLR2004 - an hour is already absurd
            msg = f"nats.connect_timeout must be a number of seconds in (0, 3600], got {self.connect_timeout!r}"
            raise ValueError(msg)
        for server in self.url.split(",") if self.url is not None else ():
            if not _NATS_URL.fullmatch(server.strip()):
                shown = re.sub(r"//[^/@]*@", "//***@", server.strip())  # never echo credentials
                msg = ("nats.url must be nats://HOST:PORT (or tls://, ws://, wss://; several comma-separated), "
                       f"got {shown!r}")
                raise ValueError(msg)


class WorkerSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    concurrency: int = 64
    max_deliveries: int = 5
    workers: int = 1


class LogSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    json: bool = False
    level: str = "info"

    def __post_init__(self) -> None:
        if self.level.lower() not in {"debug", "info", "warning", "error"}:
            msg = f"log.level must be one of debug, info, warning, error; got {self.level!r}"
            raise ValueError(msg)


class Settings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Everything the engine reads, built once in :func:`load_settings`."""

    nats: NatsSettings = NatsSettings()
    models: dict[str, ModelSettings] = {}
    """Per role: ``policy``, ``summarizer``, ``verifier``, ``aggregator``, ``rag_rewriter``,
    ``rag_summarizer``; missing roles use policy."""
    episode: EpisodeSettings = EpisodeSettings()
    evolve: EvolveSettings = EvolveSettings()
    branches: list[BranchSettings] = []
    dataset: DatasetSettings = DatasetSettings()
    worker: WorkerSettings = WorkerSettings()
    log: LogSettings = LogSettings()
    data_dir: str | None = None
    plugins: list[str] = []
    """Extra plugins as ``package.module:attribute`` (entry points of ``apollo.plugins`` load anyway)."""

    def __post_init__(self) -> None:
        ids = [branch.branch_id for branch in self.branches]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            msg = f"branches: duplicate branch_id {', '.join(duplicates)}"
            raise ValueError(msg)

    def model_for(self, role: str) -> ModelSettings:
        return self.models.get(role) or self.models.get("policy") or ModelSettings()

    def run_settings(self) -> dict[str, Any]:
        """The part of the settings a run records in ``RunStarted`` (what deciders read)."""
        models = {role: msgspec.to_builtins(self.model_for(role)) for role in self.models}
        models.setdefault("policy", msgspec.to_builtins(self.model_for("policy")))
        for model in models.values():
            model.pop("api_key", None)  # secrets never go into the log
        return {
            "episode": msgspec.to_builtins(self.episode),
            "models": models,
            "evolve": {
                key: value
                for key, value in _without_keys(msgspec.to_builtins(self.evolve)).items()
                if key not in DATASET_COMMAND_KEYS
            },
            "branches": [_without_keys(msgspec.to_builtins(b)) for b in self.branches],
        }


DATASET_COMMAND_KEYS = frozenset({"test_times", "problem_max_workers"})
"""Evolve keys that steer ``apollo run`` (samples, runs in flight), not a run's deciders:
not recorded, so they never split a dataset run's identity."""


def _without_keys(value: Any) -> Any:
    """A copy with every ``api_key`` removed: secrets never go into the log."""
    if isinstance(value, dict):
        return {k: _without_keys(v) for k, v in value.items() if k != "api_key"}
    if isinstance(value, list):
        return [_without_keys(v) for v in value]
    return value


ENV_KEYS: dict[str, tuple[str, ...]] = {
    "APOLLO_NATS_URL": ("nats", "url"),
    "APOLLO_NATS_STORE_DIR": ("nats", "store_dir"),
    "APOLLO_NATS_CREDS": ("nats", "creds_file"),
    "APOLLO_NATS_NKEY_SEED": ("nats", "nkey_seed_file"),
    "APOLLO_NATS_USER": ("nats", "user"),
    "APOLLO_NATS_PASSWORD": ("nats", "password"),
    "APOLLO_NATS_TOKEN": ("nats", "token"),
    "APOLLO_NATS_CA": ("nats", "ca_file"),
    "APOLLO_NATS_CERT": ("nats", "cert_file"),
    "APOLLO_NATS_KEY": ("nats", "key_file"),
    "APOLLO_NATS_CONNECT_TIMEOUT": ("nats", "connect_timeout"),
    "APOLLO_MODEL_URL": ("models", "policy", "base_url"),
    "APOLLO_MODEL": ("models", "policy", "model"),
    "APOLLO_API_KEY": ("models", "policy", "api_key"),
    "APOLLO_LOG_JSON": ("log", "json"),
    "APOLLO_LOG_LEVEL": ("log", "level"),
    "APOLLO_DATA_DIR": ("data_dir",),
    "APOLLO_WORKERS": ("worker", "workers"),
}


def load_settings(
    path: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Defaults <- file <- environment <- explicit overrides (e.g. CLI flags).

    Raises:
        ConfigError: unreadable file, unknown key or wrong type; the message names the key.
    """

    environ = os.environ if environ is None else environ
    raw: dict[str, Any] = translate(read_config_file(Path(path))) if path else {}
    from_env = [(name, keys) for name, keys in ENV_KEYS.items() if environ.get(name)]
    for name, keys in from_env:
        _set(raw, keys, environ[name])
    if overrides:
        raw = deep_merge(raw, dict(overrides))
    try:
        return validate(raw)
    except ConfigError as exc:
        still_from_env = [(name, keys) for name, keys in from_env if not _holds(overrides or {}, keys)]
        raise ConfigError(_naming_variable(str(exc), still_from_env)) from exc


def _holds(mapping: Mapping[str, Any], keys: tuple[str, ...]) -> bool:
    """Whether the nested ``mapping`` sets ``keys`` (a flag overriding the variable)."""
    for key in keys:
        if not isinstance(mapping, Mapping) or key not in mapping:
            return False
        mapping = mapping[key]
    return True


def _naming_variable(message: str, from_env: list[tuple[str, tuple[str, ...]]]) -> str:
    """``message`` with the APOLLO_* variable that set the refused key (never its value: it may be a secret)."""
    for name, keys in from_env:
        dotted = ".".join(keys)
        if f"$.{dotted}`" in message or f"{dotted} " in message:
            return f"{message} (from {name})"
    return message


def validate(raw: Mapping[str, Any]) -> Settings:
    """Convert a plain mapping into Settings, naming the offending key on error."""
    try:
        return msgspec.convert(dict(raw), Settings, strict=False)
    except msgspec.ValidationError as exc:
        msg = f"invalid config: {exc}"
        raise ConfigError(msg) from exc


def read_config_file(path: Path) -> dict[str, Any]:
    """Read a YAML or TOML file into a mapping, its ``base_config`` chain merged underneath.

    As in the reference, ``base_config: FILE`` loads FILE first and lays this file's
    settings over it (nested sections merge, lists are replaced). A relative FILE is
    found from the including file's folder; a base may name its own base.

    Raises:
        ConfigError: an unreadable or invalid file, or a ``base_config`` that is not a
            path, is missing or leads back to a file already in the chain.
    """
    return _read_with_bases(path, ())


def _read_with_bases(path: Path, chain: tuple[Path, ...]) -> dict[str, Any]:
    data = _read_one(path)
    base = data.pop("base_config", None)
    if base is None:
        return data
    if not isinstance(base, str) or not base.strip():
        msg = f"config file {path}: base_config must be a file path, got {base!r}"
        raise ConfigError(msg)
    base_path = Path(base).expanduser()
    if not base_path.is_absolute():
        base_path = path.parent / base_path
    seen = (*chain, path.resolve())
    if base_path.resolve() in seen:
        loop = " -> ".join(str(p) for p in (*seen, base_path.resolve()))
        msg = f"config file {path}: base_config {base} leads back to a file already included ({loop})"
        raise ConfigError(msg)
    if not base_path.is_file():
        msg = f"config file {path}: base_config {base_path} does not exist or is not a file"
        raise ConfigError(msg)
    return deep_merge(_read_with_bases(base_path, seen), data)


def _read_one(path: Path) -> dict[str, Any]:
    """One YAML or TOML file as a mapping."""
    try:
        text = path.read_text()
    except OSError as exc:
        msg = f"cannot read config file {path}: {exc.strerror or exc}"
        raise ConfigError(msg) from exc
    try:
        data = tomllib.loads(text) if path.suffix == ".toml" else yaml.safe_load(text)
    except (tomllib.TOMLDecodeError, yaml.YAMLError) as exc:
        msg = f"config file {path} is not valid {'TOML' if path.suffix == '.toml' else 'YAML'}: {exc}"
        raise ConfigError(msg) from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        msg = f"config file {path} must contain a mapping at the top level"
        raise ConfigError(msg)
    return data


def _set(raw: dict[str, Any], keys: tuple[str, ...], value: Any) -> None:
    node = raw
    for key in keys[:-1]:
        node = node.setdefault(key, {})
    node[keys[-1]] = value


def default_data_dir(settings: Settings) -> Path:
    """Where apollo keeps its state (embedded server store, RAG index...)."""
    if settings.data_dir:
        return Path(settings.data_dir).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("apollo"))
