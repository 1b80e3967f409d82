"""Benchmark files apollo reads -> the parquet verl's RLHFDataset reads, each row naming the ``apollo`` loop.

    python examples/verl/prepare_data.py --train MATH_TRAIN.jsonl --val AIME24.jsonl --out ~/data/apollo-math

Any file ``apollo run --dataset`` takes works (JSONL or parquet; MATH, GSM8K, AIME, DAPO field
names): every usable problem becomes one row with the problem as the user message, the ground
truth in ``reward_model.ground_truth``, the raw question in ``extra_info.question`` (apollo renders
its own prompt from it) and ``agent_name: apollo``. Rejected rows are listed on stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from engine.datasets import Problem, load_problems


def row_of(problem: Problem, index: int, split: str) -> dict[str, Any]:
    """One verl row for ``problem``."""
    return {
        "data_source": problem.data_source,
        "prompt": [{"role": "user", "content": problem.question}],
        "ability": "math",
        "reward_model": {"style": "rule", "ground_truth": problem.ground_truth},
        "extra_info": {"index": index, "split": split, "question": problem.question,
                       "problem_id": problem.problem_id},
        "agent_name": "apollo",
    }


def convert(source: Path, target: Path, split: str, limit: int | None = None) -> int:
    """Write ``source``'s usable problems to ``target`` as verl rows; returns how many."""
    load = load_problems(source, limit=limit)
    for rejected in load.rejected:
        print(f"{source}: line {rejected.line} skipped: {rejected.reason}", file=sys.stderr)
    rows = [row_of(problem, index, split) for index, problem in enumerate(load.problems)]
    target.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), target)
    return len(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=Path, required=True)
    parser.add_argument("--val", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=None, help="at most this many problems per file")
    args = parser.parse_args(argv)
    for split, source in (("train", args.train), ("val", args.val)):
        count = convert(source, args.out.expanduser() / f"{split}.parquet", split, args.limit)
        print(f"{split}: {count} problems -> {args.out / f'{split}.parquet'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
