"""The run filters of `apollo runs` and `apollo export`: flags, their parsing, the filter they make."""

from __future__ import annotations

import argparse
import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from engine.errors import EngineError
from handlers.workflows import WORKFLOW_NAMES
from replay.run_table import RunFilter

DATASET_SUFFIXES = (".jsonl", ".ndjson", ".json", ".parquet", ".pq")
"""The dataset files `apollo run` reads (engine/datasets.py)."""

_AGE = re.compile(r"(\d+)([smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def add_run_filter_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", type=dataset_name,
                        help="only runs of this dataset (its file, or the file's name) or data source")
    parser.add_argument("--model", dest="filter_model", metavar="MODEL",
                        help="only runs whose policy model name contains MODEL")
    parser.add_argument("--workflow", choices=WORKFLOW_NAMES, help="only runs of this workflow")
    parser.add_argument("--since", type=point_in_time, metavar="WHEN",
                        help="only runs started at or after WHEN: 2026-11-25, 2026-11-25T10:30 or an age (2h, 7d)")
    parser.add_argument("--until", type=point_in_time, metavar="WHEN", help="only runs started before WHEN")


def dataset_name(text: str) -> str:
    """The name a dataset's runs are recorded under (its file's name without the suffix, as `apollo run`
    names them) when ``text`` is that file (``../data/gsm8k.jsonl``) or its file name (``gsm8k.jsonl``);
    any other text as it is (a dataset or data source name)."""
    path = Path(text)
    if path.suffix.lower() in DATASET_SUFFIXES and (path.is_file() or os.sep not in text):
        return path.stem
    return text


def run_filter(args: argparse.Namespace) -> RunFilter:
    """The filter the parsed flags describe (absent flags keep everything).

    Raises:
        EngineError: ``--since`` is not before ``--until``, so no run could match.
    """
    since, until = getattr(args, "since", None), getattr(args, "until", None)
    if since is not None and until is not None and since >= until:
        msg = (f"--since {since:%Y-%m-%d %H:%M} UTC is not before --until {until:%Y-%m-%d %H:%M} UTC, "
               "so no run can match (an age such as 7d means that long ago)")
        raise EngineError(msg)
    return RunFilter(dataset=getattr(args, "dataset", None), model=getattr(args, "filter_model", None),
                     status=getattr(args, "status", None), workflow=getattr(args, "workflow", None),
                     since=getattr(args, "since", None), until=getattr(args, "until", None))


def point_in_time(text: str, *, now: datetime | None = None) -> datetime:
    """``2026-11-25``, ``2026-11-25T10:30`` (local time unless it names a zone) or an age
    such as ``90m``, ``2h``, ``7d`` (that long before now), as an aware UTC datetime."""
    age = _AGE.fullmatch(text.strip())
    if age:
        try:
            return (now or datetime.now(UTC)) - timedelta(**{_UNITS[age.group(2)]: int(age.group(1))})
        except OverflowError:
            raise argparse.ArgumentTypeError(f"{text!r} reaches too far back") from None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        msg = f"expected a date (2026-11-25), a date and time (2026-11-25T10:30) or an age (90m, 2h, 7d), got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None
    if moment.tzinfo is None:
        moment = moment.astimezone()  # a naive time is the user's local time
    return moment.astimezone(UTC)
