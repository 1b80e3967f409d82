"""Engine errors.

EngineError
 +-- ConfigError          invalid or missing settings
 +-- ServerError          the embedded nats-server could not start / was not found
 +-- ConnectError         NATS unreachable, or a server too old for the engine
 |    +-- AccessDenied      the server refused a credential or a permission this client needs
 +-- StreamSetupError     stream/consumer/bucket definitions could not be applied
 +-- PublishError         an append was not acknowledged
 |    +-- RunMovedOn        another writer appended to the run first (optimistic check)
 +-- RunNotFound          no events recorded for a run id
 +-- StaleHistory         a history read did not reach an event known to be stored
 +-- BusUnavailable       NATS kept failing a command through a failover for too long

Every other exception class under engine/ derives from EngineError too (a test checks):
SandboxError (engine/sandbox/errors.py), PluginError (a ConfigError, engine/plugins/errors.py),
DatasetError (engine/datasets.py), ProbeFailed and ScriptError (engine/models/),
PublishRefused and PublishTimeout (engine/nats/publisher.py), EmbedderUnavailable and
UnknownLibraryError (engine/rag/). One that is also a built-in error (ScriptError is a
ValueError, PublishTimeout a TimeoutError) keeps that base for callers that catch it.
"""

from __future__ import annotations


class EngineError(Exception):
    """Root of every error the engine raises on purpose (shown as one line by the CLI)."""


class ConfigError(EngineError):
    """Settings are invalid; the message names the key."""


class ServerError(EngineError):
    """The embedded nats-server could not be found or started."""


class ConnectError(EngineError):
    """NATS is unreachable or unsuitable."""


class AccessDenied(ConnectError):
    """NATS refused this client's credentials, or a permission its job needs."""


class StreamSetupError(EngineError):
    """Stream, consumer or bucket definitions could not be applied."""


class PublishError(EngineError):
    """An event was not acknowledged by the server."""


class RunMovedOn(PublishError):
    """An append expected the run's last sequence to be N, but another event came first."""


class RunNotFound(EngineError):
    """No events are recorded for the requested run."""


class StaleHistory(EngineError):
    """A run's history read back shorter than an event known to be stored (retried later)."""


class BusUnavailable(EngineError):
    """JetStream kept answering with transient errors (a failover) past the retry limit."""
