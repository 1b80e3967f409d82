"""The identity of a dataset run's settings: re-runs resume only what the same settings produced.

A dataset run's run ids carry a digest of everything that changes a result: the resolved
run settings (every model role's name, endpoint and sampling parameters, the episode's
protocol, grader, domain, tools and their prompt text, step budget, evolve settings,
branches) and the workflow. Secrets (``api_key``) never enter it. The digest is taken over
canonical JSON (sorted keys), so the order of keys in a config file does not matter.

Not covered: apollo's own code (a new release with other prompts keeps the digest) and the
content of a problem whose id did not change. A setting added after release is left out of
the digest while it holds the value that reproduces the earlier behaviour
(:data:`ADDED_LATER`), so an upgrade does not restart dataset runs that never use it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

DIGEST_CHARS: Final = 12
SECRET_KEYS: Final = frozenset({"api_key"})
ADDED_LATER: Final[dict[tuple[str, str], Any]] = {("episode", "prompt_layout"): "fresh"}
"""``(section, key)`` of settings added after release -> the value that behaves as before."""


def settings_digest(run_settings: Mapping[str, Any], *, workflow: str) -> str:
    """A short hex digest of the resolved run settings and workflow, secrets excluded."""
    identity = {"workflow": workflow, "settings": _without_added_defaults(_without_secrets(run_settings))}
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST_CHARS]


def other_digests(run_ids: Iterable[str], dataset_name: str, digest: str) -> set[str]:
    """Digests of earlier runs of the same dataset (by run id) made with other settings.

    Run ids start with the dataset name (unsafe characters as ``_``) and the digest, see
    :func:`engine.datasets.run_id_for`.
    """
    prefix = re.sub(r"[^A-Za-z0-9_-]", "_", dataset_name.strip())
    pattern = re.compile(rf"{re.escape(prefix)}-([0-9a-f]{{{DIGEST_CHARS}}})-.+-s\d+")
    found = {match.group(1) for run_id in run_ids if (match := pattern.match(run_id))}
    return found - {digest}


def _without_added_defaults(run_settings: dict[str, Any]) -> dict[str, Any]:
    out = dict(run_settings)
    for (section, key), default in ADDED_LATER.items():
        part = out.get(section)
        if isinstance(part, Mapping) and key in part and part[key] == default:
            out[section] = {k: v for k, v in part.items() if k != key}
    return out


def _without_secrets(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _without_secrets(v) for k, v in value.items() if k not in SECRET_KEYS}
    if isinstance(value, list | tuple):
        return [_without_secrets(v) for v in value]
    return value
