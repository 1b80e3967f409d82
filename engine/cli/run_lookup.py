"""Run ids given on the command line: a whole id, or an unambiguous prefix of one."""

from __future__ import annotations

import sys
from collections.abc import Collection

from engine.config.settings import Settings, default_data_dir
from engine.errors import EngineError
from engine.eventlog.port import EventLog
from engine.runtime.run_index import RunIndex

SHOWN_CANDIDATES = 5


async def open_run_index(event_log: EventLog, settings: Settings) -> RunIndex:
    """The index of runs in the data dir, caught up with ``event_log``; what it repaired is said on stderr."""
    index = await RunIndex.in_data_dir(event_log, default_data_dir(settings), announce=_say)
    for notice in index.notices:
        print(f"apollo: {notice}", file=sys.stderr)
    return index


async def resolve_indexed(event_log: EventLog, settings: Settings, *texts: str) -> list[str]:
    """The runs ``texts`` name (each as :func:`pick_indexed` picks it), asking the index of runs:
    the cost follows the matches, not how many runs the log holds.

    Raises:
        EngineError: a text is an ambiguous prefix (the message lists the candidates).
    """
    index = await open_run_index(event_log, settings)
    try:
        return [pick_indexed(index, text) for text in texts]
    finally:
        index.close()


async def indexed_run_ids(event_log: EventLog, settings: Settings) -> list[str]:
    """Every run with a submission recorded, from the index of runs, in the order the log's
    subjects sort (``<id>.problem.submitted``: the order listing the stream's subjects gives)."""
    index = await open_run_index(event_log, settings)
    try:
        ids, _ = index.pick("", index.count())  # the empty prefix: every listed run
    finally:
        index.close()
    return sorted(ids, key=lambda run_id: run_id + ".")


def _say(line: str) -> None:
    print(f"apollo: {line}", file=sys.stderr, flush=True)


def pick_indexed(index: RunIndex, text: str) -> str:
    """Like :func:`pick_run_id`, asking the index: cost follows the matches, not the runs recorded."""
    ids, count = index.pick(text, SHOWN_CANDIDATES + 1)
    if count == 1:
        return ids[0]
    if count == 0:
        return text
    raise EngineError(_ambiguous(text, ids[:SHOWN_CANDIDATES], count))


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
    raise EngineError(_ambiguous(text, matches[:SHOWN_CANDIDATES], len(matches)))


def _ambiguous(text: str, shown: list[str], count: int) -> str:
    listed = ", ".join(shown)
    more = f" and {count - SHOWN_CANDIDATES} more" if count > SHOWN_CANDIDATES else ""
    return f"run id prefix {text!r} is ambiguous: {count} runs match ({listed}{more}); give more of the id"
