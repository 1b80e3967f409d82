"""An offline HTML timeline of one or more runs (inline CSS and JS, no external assets).

Each run is a column; a fork sits next to its parent. Every event is an expandable row
numbered 1..n as `apollo show` numbers it (the stream sequence in its tooltip), with its
full payload (prompts, completions, tool output); each policy step shows the projection
states (episode, memory...) as they stood after it. Replies cut at ``max_tokens`` and
retried calls carry a mark.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any

import msgspec

from events.base import Event, tag_of
from events.codec import to_builtins
from events.episode import AnswerGraded, AnswerRegraded, EpisodeEnded
from events.model import ModelCallFailed, ModelCallRequested, ModelResponded
from events.policy import RolloutTrained
from events.record import Recorded
from events.run import ProblemSubmitted, RunCancelled, RunCompleted, RunFailed, RunStarted
from events.tool import ActionParsed, ToolCallRequested, ToolFailed, ToolReturned
from handlers.answer_text import answer_phrase
from handlers.projections.registry import Projection, projections
from handlers.run_settings import recorded_policy_model
from replay.call_marks import call_marks
from replay.run_ending import completion_phrase
from replay.whole_prompts import whole_prompt_records

_STRING_CLIP = 400
_LIST_CLIP = 12

_CSS = """
body{font:13px/1.4 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header{padding:10px 16px;background:#1d2330;color:#fff;display:flex;gap:12px;align-items:center}
header input{padding:3px 6px}
.runs{display:flex;gap:12px;padding:12px;align-items:flex-start;overflow-x:auto}
.run{flex:1 1 0;min-width:420px;background:#fff;border:1px solid #d5d9e0;border-radius:6px;padding:8px}
.run h2{font-size:15px;margin:4px 0}
.meta{color:#5b6475;margin-bottom:6px}
.step{border-top:2px solid #3b6fd8;margin-top:10px;padding-top:4px;font-weight:600;color:#3b6fd8}
details{border-bottom:1px solid #eef0f3;padding:2px 0}
summary{cursor:pointer;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.seq{color:#8a93a5;display:inline-block;width:52px}
.tag{display:inline-block;min-width:150px;font-family:monospace}
.t-model{color:#7a3fb0}.t-tool{color:#0f7a5a}.t-action{color:#a15c00}.t-run{color:#1d2330}
.t-answer,.t-episode,.t-trajectory{color:#b0173a}
pre{white-space:pre-wrap;word-break:break-word;background:#f3f5f8;padding:6px;margin:4px 0;
max-height:480px;overflow:auto}
.msg{margin:4px 0}.role{font-weight:600}
.state{background:#fffbe8}
.mark{background:#fde2e1;color:#9b1c1c;border-radius:3px;padding:0 4px;margin-right:4px;font-size:11px}
"""

_JS = """
function setAll(open){document.querySelectorAll('details').forEach(d=>d.open=open)}
function filterTags(text){const q=text.toLowerCase();
 document.querySelectorAll('details.event').forEach(d=>{
  d.style.display=(!q||d.dataset.tag.includes(q))?'':'none'})}
"""


def render_html(runs: Sequence[Sequence[Recorded]], *, title: str = "apollo timeline") -> str:
    """One page with a column per run (a list of runs, each a list of recorded events)."""
    registry = projections()
    numbers = {(r.event.run_id, r.seq): n for records in runs for n, r in enumerate(records, 1)}
    columns = "\n".join(_run_column(whole_prompt_records(records), registry, numbers) for records in runs)
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{_e(title)}</title><style>{_CSS}</style><script>{_JS}</script></head><body>"
        f"<header><strong>{_e(title)}</strong>"
        "<button onclick='setAll(true)'>expand all</button>"
        "<button onclick='setAll(false)'>collapse all</button>"
        "<input placeholder='filter by tag' oninput='filterTags(this.value)'></header>"
        f"<div class='runs'>{columns}</div></body></html>"
    )


def _run_column(records: list[Recorded], registry: dict[str, Projection], numbers: dict[tuple[str, int], int]) -> str:
    if not records:
        return "<section class='run'><h2>(empty run)</h2></section>"
    run_id = records[0].event.run_id
    parts = [f"<section class='run' id='run-{_e(run_id)}'><h2>{_e(run_id)}</h2>", _run_meta(records, numbers)]
    states = {name: p.initial() for name, p in registry.items()}
    for index, record in enumerate(records):
        event = record.event
        states = {name: registry[name].evolve(state, event) for name, state in states.items()}
        if isinstance(event, ModelCallRequested) and event.role == "policy" and event.episode == "main":
            parts.append(f"<div class='step' data-step='{event.step}'>Step {event.step}</div>")
        parts.append(_event_row(record, index + 1))
        if _closes_step(records, index):
            parts.append(_state_block(states))
    parts.append("</section>")
    return "\n".join(parts)


def _run_meta(records: list[Recorded], numbers: dict[tuple[str, int], int]) -> str:
    first = records[0].event
    lines = []
    if isinstance(first, ProblemSubmitted):
        lines.append(f"question: {_e(_clip(first.question, 300))}")
        if first.parent_run_id:
            number = numbers.get((first.parent_run_id, first.fork_seq or 0))
            after = f"its event {number} (seq {first.fork_seq})" if number else f"seq {first.fork_seq}"
            lines.append(f"fork of <a href='#run-{_e(first.parent_run_id)}'>{_e(first.parent_run_id)}</a> "
                         f"after {after}")
    for record in records:
        if isinstance(record.event, RunStarted):
            model = recorded_policy_model(record.event.settings) or "?"
            lines.append(f"policy model: {_e(str(model))}")
        elif isinstance(record.event, RunCompleted):
            lines.append(_e(completion_phrase(record.event)))
        elif isinstance(record.event, RunFailed):
            lines.append(f"failed: {_e(record.event.reason)}")
        elif isinstance(record.event, RunCancelled):
            by = f" by {record.event.by}" if record.event.by else ""
            lines.append(f"cancelled{_e(by)}: {_e(record.event.reason)}")
    return f"<div class='meta'>{'<br>'.join(lines)} ({len(records)} events)</div>"


def _closes_step(records: list[Recorded], index: int) -> bool:
    """Show states before the next step starts, and at the end of the run."""
    if index == len(records) - 1:
        return True
    nxt = records[index + 1].event
    return isinstance(nxt, ModelCallRequested) and nxt.role == "policy" and nxt.episode == "main"


def _event_row(record: Recorded, number: int) -> str:
    event = record.event
    tag = tag_of(type(event))
    area = tag.split(".")[0]
    marks = "".join(f"<span class='mark'>{_e(mark)}</span>" for mark in call_marks(event))
    return (
        f"<details class='event' data-tag='{_e(tag)}' data-n='{number}' data-seq='{record.seq}'><summary>"
        f"<span class='seq' title='stream sequence {record.seq}'>{number}</span>"
        f"<span class='tag t-{_e(area)}'>{_e(tag)}</span> "
        f"{marks}{_e(_headline(event))}</summary>{_body(event)}</details>"
    )


def _headline(event: Event) -> str:
    match event:
        case ModelCallRequested():
            return f"{event.role} step {event.step} asks {event.model}"
        case ModelResponded():
            return f"{event.role} step {event.step}: {_clip(event.text, 100)}"
        case ModelCallFailed():
            return f"{event.kind}: {_clip(event.message, 100)}"
        case ActionParsed():
            return f"step {event.step}: {event.kind} {event.tool or ''} {'valid' if event.valid else 'INVALID'}"
        case ToolCallRequested():
            return f"{event.tool}: {_clip(event.input, 100)}"
        case ToolReturned():
            return f"{event.tool} score {event.score:g}: {_clip(event.result, 100)}"
        case ToolFailed():
            return f"{event.tool}: {_clip(event.error, 100)}"
        case AnswerGraded():
            by = f"{event.method} {event.grader_version}" if event.grader_version else event.method
            return f"{answer_phrase(event.answer)} score {event.score:g} ({by})"
        case AnswerRegraded():
            return (f"{_clip(answer_phrase(event.answer), 100)} re-graded "
                    f"{event.old_score:g} -> {event.new_score:g} by {event.grader} {event.grader_version}")
        case RolloutTrained():
            return f"trained by {event.trainer} at step {event.step} (policy version {event.policy_version})"
        case EpisodeEnded():
            return f"{event.done_reason}, reward {event.reward:g}"
        case RunCancelled():
            return f"cancelled: {_clip(event.reason, 100)}"
    return ""


def _body(event: Event) -> str:
    blocks = []
    if isinstance(event, ModelCallRequested):
        blocks.extend(f"<div class='msg'><span class='role'>{_e(m.role)}</span><pre>{_e(m.content)}</pre></div>"
                      for m in event.messages)
    elif isinstance(event, ModelResponded):
        blocks.append(f"<div class='role'>completion</div><pre>{_e(event.text)}</pre>")
    elif isinstance(event, ToolCallRequested):
        blocks.append(f"<div class='role'>input</div><pre>{_e(event.input)}</pre>")
    elif isinstance(event, ToolReturned):
        blocks.append(f"<div class='role'>output</div><pre>{_e(event.result)}</pre>")
    blocks.append(f"<pre>{_e(json.dumps(to_builtins(event), indent=1, ensure_ascii=False))}</pre>")
    return "".join(blocks)


def _state_block(states: dict[str, Any]) -> str:
    items = "".join(
        f"<pre>{_e(name)} = {_e(json.dumps(_compact(msgspec.to_builtins(state)), indent=1, ensure_ascii=False))}</pre>"
        for name, state in states.items()
    )
    return f"<details class='state'><summary>state after this step</summary>{items}</details>"


def _compact(value: Any) -> Any:
    """States repeat whole prompts; keep them readable by clipping long strings and lists."""
    if isinstance(value, str):
        return _clip(value, _STRING_CLIP)
    if isinstance(value, list):
        shown = [_compact(item) for item in value[:_LIST_CLIP]]
        return [*shown, f"... {len(value) - _LIST_CLIP} more"] if len(value) > _LIST_CLIP else shown
    if isinstance(value, dict):
        return {key: _compact(item) for key, item in value.items()}
    return value


def _clip(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def _e(text: str) -> str:
    return html.escape(text, quote=True)
