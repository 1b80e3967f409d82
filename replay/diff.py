"""Field-level differences between events, and where two runs diverge."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from events.base import tag_of
from events.codec import to_builtins
from events.record import Recorded
from handlers.projections.episode import episode_state

IDENTITY_FIELDS = frozenset({"event_id", "run_id", "occurred_at", "causation_id", "correlation_id"})
"""Fields that always differ between two runs and say nothing about behaviour."""

VOLATILE_FIELDS = frozenset({"latency_ms", "parent_run_id", "fork_seq", "metadata", "call_id", "group_id"})
"""Measured or bookkeeping fields ignored when comparing two runs."""

_CLIP = 160


def field_differences(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Readable ``path: expected != actual`` lines for every differing leaf."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        out: list[str] = []
        for key in [*expected, *(k for k in actual if k not in expected)]:
            sub = f"{path}.{key}" if path else str(key)
            if key not in actual:
                out.append(f"{sub}: {_show(expected[key])} != <missing>")
            elif key not in expected:
                out.append(f"{sub}: <missing> != {_show(actual[key])}")
            else:
                out.extend(field_differences(expected[key], actual[key], sub))
        return out
    if isinstance(expected, list) and isinstance(actual, list):
        out = []
        for index in range(max(len(expected), len(actual))):
            sub = f"{path}[{index}]"
            if index >= len(actual):
                out.append(f"{sub}: {_show(expected[index])} != <missing>")
            elif index >= len(expected):
                out.append(f"{sub}: <missing> != {_show(actual[index])}")
            else:
                out.extend(field_differences(expected[index], actual[index], sub))
        return out
    if expected != actual or type(expected) is not type(actual):
        if isinstance(expected, str) and isinstance(actual, str):
            return [f"{path or '<value>'}: {_text_difference(expected, actual)}"]
        return [f"{path or '<value>'}: {_show(expected)} != {_show(actual)}"]
    return []


def _text_difference(expected: str, actual: str) -> str:
    """Long texts: show the neighbourhood of the first differing character."""
    if len(expected) <= _CLIP and len(actual) <= _CLIP:
        return f"{expected!r} != {actual!r}"
    pairs = enumerate(zip(expected, actual, strict=False))  # lengths may differ: that is a difference too
    at = next((i for i, (x, y) in pairs if x != y), min(len(expected), len(actual)))
    start = max(0, at - 40)
    return (f"texts differ at char {at} (lengths {len(expected)} / {len(actual)}): "
            f"...{expected[start:at + 60]!r} != ...{actual[start:at + 60]!r}")


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _CLIP else f"{text[:_CLIP]}... ({len(text)} chars)"


def behaviour(record: Recorded) -> dict[str, Any]:
    """An event without its identity and measured fields: what two runs can share."""
    data = to_builtins(record.event)
    return {k: v for k, v in data.items() if k not in IDENTITY_FIELDS and k not in VOLATILE_FIELDS}


@dataclass(frozen=True)
class StepRow:
    """One policy step of a run, summarised for a side-by-side view."""

    step: int
    action: str
    observation: str


@dataclass(frozen=True)
class RunDiff:
    """Where run B first behaves differently from run A."""

    run_a: str
    run_b: str
    same: bool
    index: int | None = None
    """Position (0-based) of the first differing event in each run."""
    seq_a: int | None = None
    seq_b: int | None = None
    tag_a: str | None = None
    tag_b: str | None = None
    differences: tuple[str, ...] = ()
    first_step: int | None = None
    """First policy step whose action or observation differs."""
    steps_a: tuple[StepRow, ...] = ()
    steps_b: tuple[StepRow, ...] = ()


def diff_runs(a: Sequence[Recorded], b: Sequence[Recorded]) -> RunDiff:
    """Compare two runs event by event (ignoring ids and timings), then step by step."""
    run_a = a[0].event.run_id if a else "?"
    run_b = b[0].event.run_id if b else "?"
    steps_a, steps_b = step_rows(a), step_rows(b)
    first_step = next((x.step for x, y in zip(steps_a, steps_b, strict=False) if x != y), None)
    if first_step is None and len(steps_a) != len(steps_b):
        first_step = min(len(steps_a), len(steps_b)) + 1
    common = {"run_a": run_a, "run_b": run_b, "first_step": first_step,
              "steps_a": tuple(steps_a), "steps_b": tuple(steps_b)}
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        left, right = behaviour(x), behaviour(y)
        if left != right:
            return RunDiff(same=False, index=index, seq_a=x.seq, seq_b=y.seq,
                           tag_a=_tag(x), tag_b=_tag(y),
                           differences=tuple(field_differences(left, right)), **common)
    if len(a) != len(b):
        index = min(len(a), len(b))
        extra = a[index] if len(a) > len(b) else b[index]
        return RunDiff(same=False, index=index,
                       seq_a=a[index].seq if len(a) > index else None,
                       seq_b=b[index].seq if len(b) > index else None,
                       tag_a=_tag(a[index]) if len(a) > index else None,
                       tag_b=_tag(b[index]) if len(b) > index else None,
                       differences=(f"one run ends earlier; the other goes on with {_tag(extra)}",),
                       **common)
    return RunDiff(same=True, **common)


def step_rows(records: Sequence[Recorded]) -> list[StepRow]:
    """The main episode's steps: action taken and observation seen."""
    state = episode_state(r.event for r in records)
    rows = []
    for step in state.steps:
        action = step.action
        if action is None:
            text = "(no reply)" if step.response is None else "(not parsed)"
        elif action.kind == "tool":
            text = f"{action.tool}: {action.tool_input or ''}"
        elif action.kind == "answer":
            text = f"answer {action.final_answer!r}"
        else:
            text = f"{action.kind} (invalid)" if not action.valid else action.kind
        rows.append(StepRow(step.step, _one_line(text), _one_line(step.observation or "")))
    return rows


def render_diff(diff: RunDiff, width: int = 60) -> str:
    """The terminal report of :func:`diff_runs`."""
    lines = [f"A: {diff.run_a}", f"B: {diff.run_b}"]
    if diff.same:
        lines.append("the runs behave identically (ids and timings aside)")
    else:
        number = diff.index + 1 if diff.index is not None else None  # as `apollo show` numbers a run's events
        lines.append(f"first difference: event {number} (A seq {diff.seq_a} {diff.tag_a} | "
                     f"B seq {diff.seq_b} {diff.tag_b})")
        lines.extend(f"  {line}" for line in diff.differences[:20])
    if diff.first_step is not None:
        lines.append(f"first differing step: {diff.first_step}")
    lines.append("")
    lines.append(f"{'STEP':>4}  {'A':<{width}} | B")
    rows_a = {r.step: r for r in diff.steps_a}
    rows_b = {r.step: r for r in diff.steps_b}
    for step in sorted(rows_a.keys() | rows_b.keys()):
        left, right = rows_a.get(step), rows_b.get(step)
        mark = " " if left == right else "*"
        lines.append(f"{step:>3}{mark}  {_clip(left.action if left else '-', width):<{width}} | "
                     f"{_clip(right.action if right else '-', width)}")
        if (left and left.observation) or (right and right.observation):
            lines.append(f"{'':>5} {_clip(left.observation if left else '', width):<{width}} | "
                         f"{_clip(right.observation if right else '', width)}")
    return "\n".join(lines)


def _tag(record: Recorded) -> str:
    return tag_of(type(record.event))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."
