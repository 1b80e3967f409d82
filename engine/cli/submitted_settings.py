"""The settings a command that starts runs sends with them, and the line that says what they are.

A run records in ``run.started`` the engine's settings with its submission's ``config``
laid over. Sending the command's whole run settings (``--config``, flags, ``APOLLO_*``)
as that ``config`` makes the run the same whichever process works it: this command's
in-process workers, or the workers of an `apollo up` started with other settings.
`apollo run` does the same (engine/cli/dataset_run.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.config.merge import deep_merge
from engine.config.settings import Settings

SCRIPTED_LABEL = "scripted demo model: canned replies, not a real model"


def submitted_config(settings: Settings, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """This command's run settings, its per-run overrides (``--max-steps``) laid over; no secrets."""
    return deep_merge(settings.run_settings(), overrides or {})


def policy_words(spec: Mapping[str, Any]) -> str:
    """``policy model M at URL``, or the scripted model named as canned."""
    model = str(spec.get("model", ""))
    if model.startswith("scripted:"):
        return f"policy model {model} ({SCRIPTED_LABEL})"
    return f"policy model {model} at {spec.get('base_url')}"


def where_words(engine_url: str | None, *, workers_here: bool = True) -> str:
    """Which workers run it: this process's, a running engine's (with this command's settings), or,
    when the command starts none (``fork --no-wait``) and no engine runs, none yet."""
    if engine_url is None and not workers_here:
        return "no engine runs here and --no-wait starts no workers: it runs once workers start (`apollo up`)"
    if engine_url is None:
        return "embedded nats-server + in-process workers"
    return f"running engine at {engine_url} (its workers use this command's settings, not the engine's own)"


def announce(command: str, policy: Mapping[str, Any], engine_url: str | None, *, workers_here: bool = True) -> str:
    """The stderr line a command prints before it submits."""
    return f"apollo {command}: {policy_words(policy)}; {where_words(engine_url, workers_here=workers_here)}"
