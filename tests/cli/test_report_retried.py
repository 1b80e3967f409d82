"""`apollo report` over a dataset run whose failed sample was retried and then completed.

The table counts a sample's latest attempt only (as `apollo run` does), but the note under it
counted every failed attempt ever recorded: "1 sample(s) could not be completed" beside a table
whose failed column was 0. The note now counts what the table counts.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.cli.support import apollo


def _row(run_id: str, problem: str, attempt: int, *, completed: bool, score: float | None) -> dict:
    return {"run_id": run_id, "problem_id": problem, "data_source": "gsm8k", "sample": 0, "attempt": attempt,
            "model": "m", "settings_digest": "d1", "completed": completed, "finished": completed, "score": score,
            "correct": bool(score), "done_reason": "answer" if completed else "model_failed",
            "steps": 2 if completed else 1, "tool_calls": 1 if completed else 0}


def _page(tmp_path: Path, rows: list[dict]) -> str:
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "report.html"
    code, _, err = apollo(tmp_path / "data", "report", "--results", str(results), "--out", str(out))
    assert code == 0, err[-2000:]
    return out.read_text()


def _failed_cells(page: str) -> list[str]:
    """The failed column of the summary table (its seventh cell)."""
    return [cells[6] for cells in (re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", page))
            if len(cells) > 6]


def test_a_retried_sample_that_completed_is_not_counted_as_not_completed(tmp_path: Path) -> None:
    """A sample whose first attempt failed and whose retry completed is no failed sample, in the table or the note."""
    page = _page(tmp_path, [_row("d-0-s0", "0", 0, completed=False, score=None),
                            _row("d-0-s0-r1", "0", 1, completed=True, score=1.0),
                            _row("d-1-s0", "1", 0, completed=True, score=0.0)])
    assert _failed_cells(page) == ["0"]
    assert "could not be completed" not in page


def test_the_note_counts_the_samples_the_table_counts_as_failed(tmp_path: Path) -> None:
    """Two failed attempts of one sample are one sample not completed, as in the table's failed column."""
    page = _page(tmp_path, [_row("d-0-s0", "0", 0, completed=False, score=None),
                            _row("d-0-s0-r1", "0", 1, completed=False, score=None),
                            _row("d-1-s0", "1", 0, completed=True, score=1.0)])
    assert _failed_cells(page) == ["1"]
    assert "<p>1 sample(s) could not be completed" in page
