"""Which policy version each model role is served with, as this process knows it.

The serving side's activations are facts in the log (``policy.activated``); this registry
is their in-process view, fed by :class:`engine.serving.sync.PolicySync` right after it
records one and, in worker processes, by :func:`engine.serving.watch.watch_activations`.
The model router reads it for every call, so a reply carries the version that was active
when the call was made and replay reads it back from ``model.responded``.
"""

from __future__ import annotations

from dataclasses import dataclass

from events.policy import PolicyActivated


@dataclass(frozen=True)
class ActivePolicy:
    """One policy's served version and where it applies."""

    policy: str
    version: int
    roles: tuple[str, ...]
    served_model: str | None
    """The model name calls must send (a LoRA adapter's); ``None`` keeps the configured one."""
    endpoint: str | None
    """The base URL serving it; ``None`` applies to every endpoint of ``roles``."""

    def serves(self, role: str, base_url: str) -> bool:
        return role in self.roles and (self.endpoint is None or _same_url(self.endpoint, base_url))


class ActivePolicies:
    """The newest activation of each policy; older or repeated ones change nothing."""

    def __init__(self) -> None:
        self._by_policy: dict[str, ActivePolicy] = {}

    def apply(self, event: PolicyActivated) -> bool:
        """Take ``event`` into account; ``True`` when it is newer than what was known."""
        known = self._by_policy.get(event.policy)
        if known is not None and known.version >= event.version:
            return False
        self._by_policy[event.policy] = ActivePolicy(
            policy=event.policy, version=event.version, roles=tuple(event.roles),
            served_model=event.served_model, endpoint=event.endpoint,
        )
        return True

    def for_call(self, role: str, base_url: str) -> ActivePolicy | None:
        """The policy serving ``role`` at ``base_url`` (the newest when several do), if any."""
        serving = [p for p in self._by_policy.values() if p.serves(role, base_url)]
        return max(serving, key=lambda p: p.version) if serving else None

    def version_of(self, policy: str) -> int | None:
        known = self._by_policy.get(policy)
        return known.version if known else None

    def clear(self) -> None:
        self._by_policy.clear()


def _same_url(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


_PROCESS_POLICIES = ActivePolicies()


def active_policies() -> ActivePolicies:
    """This process's registry (model routers built without one read it)."""
    return _PROCESS_POLICIES
