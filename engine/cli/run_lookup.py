"""Run ids given on the command line: a whole id, or an unambiguous prefix of one."""

from __future__ import annotations

from collections.abc import Collection

from engine.errors import EngineError
from engine.eventlog.port import EventLog

SHOWN_CANDIDATES = 5


async def resolve_run_id(event_log: EventLog, text: str) -> str:
    """The run ``text`` names among the runs in the log (see :func:`pick_run_id`)."""
    return pick_run_id(await event_log.run_ids(), text)


def pick_run_id(ids: Collection[str], text: str) -> str:
    """``text`` itself when it is one of ``ids``, else the one id that starts with it.

    When no id starts with ``text`` it is returned as given: reading that run then says
    whether anything is recorded under it.

    Raises:
        EngineError: several ids start with ``text`` (the message lists them).
    """
    if text in ids:
        return text
    matches = sorted(run_id for run_id in ids if run_id.startswith(text))
    if len(matches) == 1:
        return matches[0]
    if not matches:
        return text  # maybe a run without a readable submission: its read says what is there
    listed = ", ".join(matches[:SHOWN_CANDIDATES])
    more = f" and {len(matches) - SHOWN_CANDIDATES} more" if len(matches) > SHOWN_CANDIDATES else ""
    msg = f"run id prefix {text!r} is ambiguous: {len(matches)} runs match ({listed}{more}); give more of the id"
    raise EngineError(msg)
