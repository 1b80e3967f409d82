"""`apollo runs`: --limit N names an older page only when there is one; --dataset takes the file `run` took.

It printed ``older runs: add --before RUN`` whenever N rows were shown, also when they were the
last N: following the hint then found ``no runs before RUN``. And ``--dataset ../data/gsm8k.jsonl``
(what `apollo run --dataset` was given) matched nothing: runs are recorded under ``gsm8k``.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.support import DATASET, apollo


def test_a_limit_that_shows_every_run_names_no_older_page(two_runs: Path) -> None:
    """--limit equal to the runs recorded: no hint; one less: the hint, naming the last row shown."""
    code, out, err = apollo(two_runs, "runs", "--json")
    assert code == 0, err[-2000:]
    recorded = [row["run_id"] for row in json.loads(out)]
    code, out, err = apollo(two_runs, "runs", "--limit", str(len(recorded)))
    assert code == 0, err[-2000:]
    assert len(out.splitlines()) == len(recorded) + 1
    assert "older runs" not in err
    code, out, err = apollo(two_runs, "runs", "--limit", str(len(recorded) - 1))
    assert code == 0, err[-2000:]
    assert f"older runs: add --before {recorded[-2]}" in err
    code, out, err = apollo(two_runs, "runs", "--limit", "1", "--json")
    assert code == 0, err[-2000:]
    assert [row["run_id"] for row in json.loads(out)] == recorded[:1]


def test_dataset_filter_takes_the_file_as_run_was_given_it(two_runs: Path) -> None:
    """--dataset ../shared/data/gsm8k.jsonl (or gsm8k.jsonl) lists the gsm8k runs, as --dataset gsm8k does."""
    code, out, err = apollo(two_runs, "runs", "--json", "--dataset", "gsm8k")
    assert code == 0, err[-2000:]
    by_name = json.loads(out)
    assert {"solve-abc1", "solve-abd2"} <= {row["run_id"] for row in by_name}
    for given in (str(DATASET), DATASET.name):
        code, out, err = apollo(two_runs, "runs", "--json", "--dataset", given)
        assert code == 0, err[-2000:]
        assert json.loads(out) == by_name, given
