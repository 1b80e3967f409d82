"""Why samples could not be completed: each distinct reason with its count, an example run, and
whether running the same command again can help.

Read from results rows (:func:`replay.results.result_row`), so a results file explains itself
too. Reasons are grouped with their numbers masked ("maximum context length is 4096 tokens,
you requested 5123" and "... 5301" are one reason); the example keeps its own text.

Whether a retry can help is judged from the failure's kind (an HTTP 400 is met again by the same
request), unless the command saw otherwise: a run that failed for that reason and whose retry
completed in the same command (``passed_on_retry``) shows that a retry can pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

import msgspec

PERMANENT_KINDS: Final = frozenset({"context_length", "bad_response"})
"""Model failure kinds the same request meets again (an HTTP 4xx such as 404 or 400, a prompt over
the context, a reply the client cannot read): a retry with the same settings fails the same way.
Timeouts, refused connections, rate limits and 5xx can pass."""
PERMANENT_TEXT: Final = re.compile(r"bad model server URL", re.IGNORECASE)
"""A ``connection`` failure caused by the URL itself (see ``engine.models.failures``)."""
SHOWN: Final = 5
"""Distinct reasons printed; the rest are summed in one line."""
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


class FailureReason(msgspec.Struct, frozen=True, kw_only=True):
    reason: str
    """The first example's failure text (``done_reason`` when the run recorded none)."""
    count: int
    example_run_id: str
    retry_can_help: bool


def failure_reasons(rows: Iterable[Mapping[str, Any]],
                    passed_on_retry: Iterable[Mapping[str, Any]] = ()) -> list[FailureReason]:
    """The rows that were not completed, grouped by reason, most frequent first.

    ``passed_on_retry``: rows of failed runs whose retry completed; their reasons are ones a retry can get past.
    """
    passed = {_key(row) for row in passed_on_retry}
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        if row.get("completed") is not False and row.get("status") != "not submitted":
            continue
        groups.setdefault(_key(row), []).append(row)
    reasons = [FailureReason(reason=_text(group[0]), count=len(group), example_run_id=str(group[0].get("run_id")),
                             retry_can_help=key in passed or _retry_can_help(group[0]))
               for key, group in groups.items()]
    return sorted(reasons, key=lambda r: -r.count)


def render_reasons(reasons: list[FailureReason], total: int) -> list[str]:
    """Lines for the end of `apollo run`: the count, each reason, then what to do."""
    failed = sum(r.count for r in reasons)
    lines = [f"{failed} of {total} runs could not be completed:"]
    width = len(str(max((r.count for r in reasons), default=0)))
    for reason in reasons[:SHOWN]:
        lasting = "" if reason.retry_can_help else "  [a retry fails the same way]"
        lines.append(f"  {str(reason.count).rjust(width)} x {reason.reason}  (e.g. apollo show "
                     f"{reason.example_run_id}){lasting}")
    hidden = reasons[SHOWN:]
    if hidden:
        lines.append(f"  ... {sum(r.count for r in hidden)} more with {len(hidden)} other reasons "
                     "(the results file's failure column has each)")
    lines.append(_advice(reasons))
    return lines


def _advice(reasons: list[FailureReason]) -> str:
    lasting = sum(r.count for r in reasons if not r.retry_can_help)
    passing = sum(r.count for r in reasons if r.retry_can_help)
    fix = ("fix the model server or the settings first (changed settings start new runs; the same command "
           "retries these)")
    if not lasting:
        return "run the same command again to retry them"
    if not passing:
        return f"a retry with the same model server and settings fails the same way: {fix}"
    return (f"run the same command again to retry the {passing} that may pass; the other {lasting} fail the same "
            f"way until you {fix}")


def _key(row: Mapping[str, Any]) -> str:
    """The reason a row's failure is grouped under: its text with the numbers masked."""
    return _NUMBER.sub("N", _text(row))


def _text(row: Mapping[str, Any]) -> str:
    failure = row.get("failure")
    if isinstance(failure, str) and failure:
        return failure
    if row.get("status") == "not submitted":
        return "not submitted"
    return str(row.get("done_reason") or row.get("status") or "unknown")


def _retry_can_help(row: Mapping[str, Any]) -> bool:
    failure = str(row.get("failure") or "")
    kind = failure.split(":", 1)[0].strip()
    return kind not in PERMANENT_KINDS and not PERMANENT_TEXT.search(failure)
