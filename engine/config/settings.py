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
from typing import Annotated, Any

import msgspec
import yaml

from engine.config.merge import deep_merge
from engine.config.reference import translate
from engine.config.validation_message import explain
from engine.errors import ConfigError
from handlers.episode.protocol import APOLLO, PROTOCOLS
from handlers.run_settings import (
    BranchSpec,
    Count,
    EpisodeSpec,
    EvolveSpec,
    ModelSpec,
    Positive,
    VerifierEpisodeSpec,
)


class ModelSettings(ModelSpec, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One model role's endpoint and sampling parameters (the recorded ones are
    :class:`handlers.run_settings.ModelSpec`'s), plus its key, which is never recorded."""

    model: str = "scripted:examples/scripted/demo.json"
    api_key: str = "EMPTY"


class EpisodeSettings(EpisodeSpec, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How one reasoning episode runs: :class:`handlers.run_settings.EpisodeSpec`, checked."""

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            msg = f"episode.protocol: unknown protocol {self.protocol!r} (allowed: {', '.join(PROTOCOLS)})"
            raise ValueError(msg)
        if self.prompt_layout == "chat" and self.protocol != APOLLO:
            msg = (f"episode.prompt_layout: chat needs episode.protocol apollo (protocol {self.protocol!r} "
                   "renders the reference's own prompts)")
            raise ValueError(msg)


class VerifierEpisodeSettings(VerifierEpisodeSpec, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How each verifier episode of the evolve workflow runs (:class:`handlers.run_settings.VerifierEpisodeSpec`)."""


class EvolveSettings(EvolveSpec, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The self-evolution workflow (see docs/evolve.md): what a run records
    (:class:`handlers.run_settings.EvolveSpec`) plus the keys that steer ``apollo run``."""

    test_times: Positive = 1
    """Passes over the dataset (reference ``run.test_times``); ``apollo run --samples`` wins."""
    verifier_episode: VerifierEpisodeSettings = VerifierEpisodeSettings()
    default_verifier: ModelSettings | None = None
    """Verifier of branches that name none (reference ``default_verifier_cfg``)."""
    problem_max_workers: Count = 0
    """Runs in flight in ``apollo run --workflow evolve`` when ``--concurrency`` is not given (0: its default)."""


class BranchSettings(BranchSpec, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One branch of a multi-model evolve run."""

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
        if not 0 < self.connect_timeout <= 3600:  # an hour is already absurd
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


class GradingSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    numeric_tolerance: float | None = None
    """Relative tolerance for comparing numbers numerically. Off by default: the math grader
    then needs exact equality (a decimal never equals pi), see docs/grading.md."""

    def __post_init__(self) -> None:
        if self.numeric_tolerance is not None and not 0 < self.numeric_tolerance < 1:
            msg = f"grading.numeric_tolerance must be between 0 and 1 (relative), got {self.numeric_tolerance!r}"
            raise ValueError(msg)

    def as_settings(self) -> dict[str, Any]:
        """The settings a grader's version digests (only what is set, so defaults keep old versions)."""
        return {} if self.numeric_tolerance is None else {"numeric_tolerance": self.numeric_tolerance}


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
    grading: GradingSettings = GradingSettings()
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
        return _convert(raw)
    except msgspec.ValidationError as exc:
        msg = f"invalid config: {explain(exc, raw, _convert)}"
        raise ConfigError(msg) from exc


def _convert(raw: Mapping[str, Any]) -> Settings:
    return msgspec.convert(dict(raw), Settings, strict=False)


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
