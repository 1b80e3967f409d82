"""Writing `apollo run`'s results file, saying so when it replaces rows this run does not write.

A results file is one command's view of the log: the runs themselves stay recorded, so a row
that disappears can be written again by the command that made it (which resumes, with no model
call). What must not happen is a silent swap: another model's or settings' file replaced, or a
10-row file cut to 2 rows, without a word.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from engine.errors import EngineError


def write_results(out: Path, rows: list[dict[str, Any]]) -> str | None:
    """Write ``rows`` to ``out``; return a line naming the earlier rows replaced, if any."""
    dropped = _dropped(_earlier_rows(out), rows)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    except OSError as exc:
        msg = f"cannot write the results to {out}: {exc.strerror or exc}"
        raise EngineError(msg) from exc
    return _replaced_words(out, dropped) if dropped else None


def _earlier_rows(out: Path) -> list[Mapping[str, Any]]:
    """The rows in ``out`` now; lines that are not JSON objects are counted as rows of unknown runs."""
    try:
        lines = out.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    rows: list[Mapping[str, Any]] = []
    for line in filter(str.strip, lines):
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        rows.append(row if isinstance(row, dict) else {})
    return rows


def _dropped(earlier: Iterable[Mapping[str, Any]], rows: list[dict[str, Any]]) -> list[Mapping[str, Any]]:
    """Earlier rows whose sample (settings, problem, sample index) this run has no row for.

    A retried sample's new attempt is the same sample: its old row is not lost, only updated.
    """
    kept = {_sample_key(row) for row in rows}
    return [row for row in earlier if _sample_key(row) not in kept or not row]


def _sample_key(row: Mapping[str, Any]) -> tuple[Any, ...]:
    return (row.get("settings_digest"), row.get("data_source"), row.get("problem_id"), row.get("sample"),
            None if "problem_id" in row else row.get("run_id"))


def _replaced_words(out: Path, dropped: list[Mapping[str, Any]]) -> str:
    settings = Counter((str(row.get("model") or "?"), str(row.get("settings_digest") or "?")) for row in dropped)
    named = "; ".join(f"{count} of model {model}, settings digest {digest}"
                      for (model, digest), count in settings.most_common(3))
    more = f"; {len(settings) - 3} more settings" if len(settings) > 3 else ""
    return (f"replaced {len(dropped)} earlier row(s) of {out} that this run does not write ({named}{more}); "
            "their runs stay in the log: the command that made them writes them again, without model calls")
