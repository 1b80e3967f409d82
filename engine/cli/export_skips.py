"""What `apollo export` left out, said once per reason: a count and one example, not a line per
trajectory (an sft export of a weak model skips most of them for the same reason)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

SHOWN_REASONS = 10


def skip_lines(skipped: Sequence[Mapping[str, Any]]) -> list[str]:
    """``apollo export: skipped 40 trajectories: <reason> (e.g. <traj> of run <run>)``, most frequent first."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for item in skipped:
        groups.setdefault(_reason_of_any_run(item), []).append(item)
    ordered = sorted(groups.items(), key=lambda pair: -len(pair[1]))  # stable: first seen first among ties
    lines = [_line(reason, items) for reason, items in ordered[:SHOWN_REASONS]]
    rest = ordered[SHOWN_REASONS:]
    if rest:
        lines.append(f"apollo export: skipped {sum(len(items) for _, items in rest)} more for "
                     f"{len(rest)} other reasons")
    return lines


def _reason_of_any_run(item: Mapping[str, Any]) -> str:
    """The reason with its run's id as ``RUN`` ("never regraded (run `apollo regrade RUN` first ...)"), so the
    same reason given for many runs is one line, not one per run."""
    reason, run_id = str(item["reason"]), str(item.get("run_id") or "")
    return re.sub(rf"(?<![\w.-]){re.escape(run_id)}(?![\w.-])", "RUN", reason) if run_id else reason


def _line(reason: str, items: Sequence[Mapping[str, Any]]) -> str:
    first = items[0]
    runs = list(dict.fromkeys(str(item.get("run_id")) for item in items))
    if len(runs) == 1:
        reason = str(first["reason"])  # one run: its own id, as the reason named it
    elif "RUN" in reason:
        reason += f" ({len(runs)} runs)"
    turns = first.get("step") is not None  # a turn left out of an otherwise exported trajectory
    what = ("turn" if turns else "trajectory") if len(items) == 1 else ("turns" if turns else "trajectories")
    example = f"{first['traj_uid']}" + (f" step {first['step']}" if turns else "") + f" of run {first['run_id']}"
    return f"apollo export: skipped {len(items)} {what}: {reason} (e.g. {example})"
