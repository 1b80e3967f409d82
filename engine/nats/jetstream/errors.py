"""Wire errors turned into the engine's: what a NATS or Object Store answer means here.

The rest of the engine never sees ``nats.errors``: it asks the log's ``bus_failure``
whether an error was the bus's, and appends fail as :class:`RunMovedOn` or
:class:`PublishError`.
"""

from __future__ import annotations

import nats.errors
import nats.js.errors

from engine.errors import EngineError

WRONG_LAST_SEQUENCE = 10071
"""JetStream's error code for a failed ``Nats-Expected-Last-Subject-Sequence`` check."""
DUPLICATE_IN_PROCESS = 10158
"""JetStream's error code when the same ``Nats-Msg-Id`` is being stored by another append."""

MISSING_PAYLOAD = (
    nats.js.errors.ObjectNotFoundError,
    nats.js.errors.ObjectDeletedError,
    nats.js.errors.DigestMismatchError,
    nats.js.errors.BadObjectMetaError,
    nats.js.errors.InvalidObjectNameError,
    nats.js.errors.LinkIsABucketError,
    nats.js.errors.BucketNotFoundError,
)
"""Object Store answers meaning an offloaded body can never be read (not a broker hiccup)."""


class LaggingReplica(EngineError, TimeoutError):
    """A read was served by a replica behind the leader; reading again resumes it (transient)."""


def bus_failure(exc: BaseException) -> bool | None:
    """NATS errors are the bus's (worth retrying), except an offloaded body that is gone."""
    if isinstance(exc, MISSING_PAYLOAD):
        return False
    if isinstance(exc, (nats.errors.Error, nats.js.errors.Error)):
        return True
    return None


def missing(exc: Exception) -> str:
    """Why a message whose offloaded body is gone cannot be read (one line)."""
    return f"offloaded body not readable from the object store ({type(exc).__name__}: {exc})"[:300]


def direct_get_failed(status: str, description: str | None) -> Exception:
    """The error a direct get's status stands for (503: nobody answered, as in a failover)."""
    if status == "503":
        return nats.errors.NoRespondersError()
    return nats.js.errors.APIError(code=int(status) if status.isdigit() else None, description=description)
