"""Projection of a raw model reply onto the one action it takes this turn.

Models write free text with XML-like action tags; nothing stops them from writing
two actions, repeating a tag or leaving one open. This module decides, after the
fact and without side effects, which single action a reply stands for and whether
the reply followed the one-action-per-turn protocol:

* **Truncation** (case-sensitive, like the reference): with reports accepted, cut
  right after the first ``</report>``; otherwise after the first ``</answer>``;
  otherwise after the earliest closing tag of any known tool.
* **Extraction** on the truncated text (case-insensitive, non-greedy): the first
  ``<report>`` block (when accepted), else the first ``<answer>`` block, else the
  first complete block of the first tool *in tool-list order*. The body is stripped
  and the tag is rewritten in lower case.
* **Validity** on the *original* reply (open-tag counts, case-insensitive): a tool
  tag together with an answer (or report) is invalid; more than one tool tag, more
  than one answer or more than one report is invalid; no action at all is invalid.
  An invalid reply keeps its extracted action so callers may still inspect it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Final, Literal

import msgspec

from events.tool import ActionKind

DEFAULT_TOOL_TAGS: Final[tuple[str, ...]] = (
    "python_code",
    "local_rag",
    "rag_search",
    "web_search",
    "informalmath_verify",
)
"""Tool tags recognised by default, in extraction priority order."""

_TAG_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ParsedAction(msgspec.Struct, frozen=True, kw_only=True):
    """The single action a reply stands for (fields mirror ``events.ActionParsed``)."""

    kind: ActionKind
    action: str
    """Projected action text, e.g. ``<python_code>print(1)</python_code>``; empty if none."""
    valid: bool
    tool: str | None = None
    tool_input: str | None = None
    """Stripped body of the tool tag."""
    answer: str | None = None
    """Stripped body of the ``<answer>`` (or ``<report>``) block."""
    error: str | None = None
    """Why the reply breaks the protocol, addressed to the model; ``None`` when valid."""


def parse_action(
    text: str, *, tools: Sequence[str] = DEFAULT_TOOL_TAGS, accept_report: bool = False
) -> ParsedAction:
    """Project ``text`` onto one action.

    Args:
        text: The raw model reply.
        tools: Known tool tags, in extraction priority order.
        accept_report: Whether ``<report>`` is an action (verifier role, evolving variant).
    """
    tools = _checked_tools(tools)
    kind, tool, body = _extract(_truncate(text, tools, accept_report), tools, accept_report)
    error = _protocol_error(text, tools, accept_report, found=kind != "empty")
    if kind == "empty":
        return ParsedAction(kind="empty", action="", valid=False, error=error)
    tag = tool if kind == "tool" else kind
    return ParsedAction(
        kind=kind,
        action=f"<{tag}>{body}</{tag}>",
        valid=error is None,
        tool=tool,
        tool_input=body if kind == "tool" else None,
        answer=body if kind != "tool" else None,
        error=error,
    )


def _checked_tools(tools: Sequence[str]) -> tuple[str, ...]:
    """Tool tags as a tuple; a tag that is not a plain name would corrupt the patterns."""
    tools = tuple(tools)
    for tag in tools:
        if not _TAG_NAME.fullmatch(tag) or tag.lower() in ("answer", "report"):
            msg = f"not a usable tool tag: {tag!r}"
            raise ValueError(msg)
    return tools


def _truncate(text: str, tools: tuple[str, ...], accept_report: bool) -> str:
    """Cut the reply after the closing tag of the action it most likely meant."""
    for close in (f"</{tag}>" for tag in _final_tags(accept_report)):
        pos = text.find(close)
        if pos != -1:
            return text[: pos + len(close)]
    hits = [(pos, close) for close in (f"</{t}>" for t in tools) if (pos := text.find(close)) != -1]
    if not hits:
        return text
    pos, close = min(hits)
    return text[: pos + len(close)]


def _final_tags(accept_report: bool) -> tuple[Literal["report", "answer"], ...]:
    """Tags that end a turn, highest priority first."""
    return ("report", "answer") if accept_report else ("answer",)


def _first_block(text: str, tag: str) -> str | None:
    """Body of the first complete ``<tag>...</tag>`` block, like a non-greedy search.

    Found with two linear scans instead of a regex, which backtracks quadratically
    over replies full of unclosed tags.
    """
    opened = _open(tag).search(text)
    if opened is None:
        return None
    closed = _close(tag).search(text, opened.end())
    return None if closed is None else text[opened.end() : closed.start()]


@lru_cache(maxsize=64)
def _open(tag: str) -> re.Pattern[str]:
    return re.compile(f"<{tag}>", re.IGNORECASE)


@lru_cache(maxsize=64)
def _close(tag: str) -> re.Pattern[str]:
    return re.compile(f"</{tag}>", re.IGNORECASE)


def _extract(
    text: str, tools: tuple[str, ...], accept_report: bool
) -> tuple[ActionKind, str | None, str]:
    """(kind, tool, stripped body) of the highest-priority complete block."""
    for kind in _final_tags(accept_report):
        body = _first_block(text, kind)
        if body is not None:
            return kind, None, body.strip()
    for tool in tools:
        body = _first_block(text, tool)
        if body is not None:
            return "tool", tool, body.strip()
    return "empty", None, ""


def _protocol_error(
    text: str, tools: tuple[str, ...], accept_report: bool, *, found: bool
) -> str | None:
    """The model-facing reason the reply is invalid, or ``None``."""
    tool_counts = {t: len(_open(t).findall(text)) for t in tools}
    n_tools = sum(tool_counts.values())
    n_answers = len(_open("answer").findall(text))
    n_reports = len(_open("report").findall(text)) if accept_report else 0
    final = "a report" if n_reports and not n_answers else "an answer"
    if n_tools and (n_answers or n_reports):
        return (
            f"Your reply contained both a tool call and {final}; use exactly one action per turn."
        )
    if n_tools > 1:
        return (
            f"Your reply contained {n_tools} tool calls; only the first one was considered. "
            "Make exactly one tool call per turn."
        )
    if n_answers > 1:
        return (
            f"Your reply contained {n_answers} <answer> blocks; only the first one was "
            "considered. Give exactly one answer."
        )
    if n_reports > 1:
        return (
            f"Your reply contained {n_reports} <report> blocks; only the first one was "
            "considered. Write exactly one report."
        )
    if found:
        return None
    return _missing_action_error(text, tools, accept_report, tool_counts)


def _missing_action_error(
    text: str, tools: tuple[str, ...], accept_report: bool, tool_counts: dict[str, int]
) -> str:
    """Explain an empty projection: nothing at all, or a block left open."""
    opened = [t for t in tools if tool_counts[t]]
    opened[:0] = [tag for tag in _final_tags(accept_report) if _open(tag).search(text)]
    if opened:
        tag = opened[0]
        return (
            f"Your <{tag}> block was never closed with </{tag}>, so no action was taken. "
            "Finish every action with its closing tag."
        )
    final = "<report>...</report>" if accept_report else "<answer>...</answer>"
    return (
        "Your reply contained no action. End every reply with exactly one complete "
        f"action: a tool call or {final}."
    )
