"""Run ids a command is told to use (`--run-id`, `rollouts --prefix`) that a recorded run holds already.

A submission's event id is its run id, so submitting under a recorded run's id is a no-op in
the log: the command would then follow, and report, the earlier run as if it were the one
asked for, with another question, model or settings. A recorded run submitted the same way is
the same run (following it is truthful, and said); one submitted otherwise is refused before
anything is submitted, in one line naming what differs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from engine.errors import EngineError
from engine.eventlog.port import EventLog
from events.run import ProblemSubmitted

COMPARED = ("question", "ground_truth", "workflow", "problem_id", "data_source", "group_id", "group_size",
            "sample_index", "parent_run_id")
"""What makes two submissions the same run (the time they were made does not)."""


async def recorded_submission(log: EventLog, run_id: str) -> ProblemSubmitted | bool | None:
    """The submission recorded under ``run_id``; False when nothing is recorded there, None when the
    run has events but no readable submission."""
    records = await log.read_run(run_id)
    if not records:
        return False
    return next((r.event for r in records if isinstance(r.event, ProblemSubmitted)), None)


def differences(recorded: ProblemSubmitted, new: ProblemSubmitted, *, metadata: Iterable[str] = ()) -> list[str]:
    """What differs between a recorded submission and a new one, in words (empty: the same run)."""
    found = []
    if recorded.question != new.question:
        found.append(f"question {short(recorded.question)}")
    for name in COMPARED[1:]:
        if getattr(recorded, name) != getattr(new, name):
            found.append(f"{name.replace('_', ' ')} {getattr(recorded, name)!r}")
    found += _config_differences(recorded.config, new.config)
    for key in metadata:
        if recorded.metadata.get(key) != new.metadata.get(key):
            found.append(f"{key.replace('_', ' ')} {recorded.metadata.get(key)!r}")
    return found


def _config_differences(recorded: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    if _canonical(recorded) == _canonical(new):
        return []
    policy = (recorded.get("models") or {}).get("policy") or {}
    asked = (new.get("models") or {}).get("policy") or {}
    if (policy.get("model"), policy.get("base_url")) != (asked.get("model"), asked.get("base_url")):
        scripted = str(policy.get("model", "")).startswith("scripted:")
        where = f" at {policy['base_url']}" if policy.get("base_url") and not scripted else ""
        return [f"policy model {policy.get('model') or 'of the engine'}{where}"]
    keys = sorted(k for k in {*recorded, *new} if _canonical(recorded.get(k)) != _canonical(new.get(k)))
    return [f"other settings ({', '.join(keys)})"]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def short(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= width else flat[: width - 1] + "…")


async def check_run_id(log: EventLog, new: ProblemSubmitted, *, flag: str, nothing: str) -> bool:
    """True when ``new``'s run is recorded already with the same submission (the command follows it);
    False when its id is free.

    Raises:
        EngineError: a recorded run holds the id with another submission (or none readable).
    """
    recorded = await recorded_submission(log, new.run_id)
    if recorded is False:
        return False
    if recorded is None:
        raise EngineError(f"run id {new.run_id!r} is taken: a run with no readable submission is recorded under "
                          f"it; {nothing}: choose another {flag}")
    assert isinstance(recorded, ProblemSubmitted)
    found = differences(recorded, new)
    if found:
        raise EngineError(taken(new.run_id, found, flag=flag, nothing=nothing))
    return True


def taken(run_id: str, found: list[str], *, flag: str, nothing: str) -> str:
    """The one line refusing a recorded run's id for a different submission."""
    return (f"run id {run_id!r} is taken: a run submitted with {'; '.join(found)} is recorded under it; {nothing}: "
            f"choose another {flag} (`apollo show {run_id}` shows that run)")
