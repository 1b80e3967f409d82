"""Training samples as table rows, written to Parquet (pyarrow) or JSON lines.

Columns are chosen so verl's loaders read the files as they are:
``RLHFDataset`` reads ``prompt`` (chat messages), ``data_source`` and ``extra_info.index``;
``MultiTurnSFTDataset`` reads ``messages`` (its loss mask covers assistant messages).
The reference's single-turn SFT keys ``question``/``answer`` are in ``sft`` rows too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec

from events import TrajectorySealed
from replay.training.samples import Sample, SampleOptions, SampleSet, build_many

Format = Literal["parquet", "jsonl"]
FORMATS = ("parquet", "jsonl")

RL_COLUMNS = (
    "data_source", "prompt", "response", "messages", "reward", "outcome_reward", "ability",
    "uid", "traj_uid", "run_id", "problem_id", "sample_index", "step", "is_action_valid",
    "episode_reward", "episode_length", "tool_callings", "score", "policy_version",
    "prompt_token_ids", "response_token_ids", "extra_info", "model", "ground_truth",
    "role", "vote", "reward_source",
)  # fmt: skip
"""Columns of ``per_turn`` and ``multi_turn`` exports, in order."""
SFT_COLUMNS = (
    "messages", "prompt", "question", "answer", "data_source", "uid", "traj_uid", "run_id",
    "problem_id", "step", "score", "extra_info", "model", "ground_truth",
)  # fmt: skip
"""Columns of ``sft`` exports, in order."""


class ExportReport(msgspec.Struct, kw_only=True):
    """What an export wrote and what it left out."""

    path: str
    layout: str
    format: str
    rows: int
    trajectories: int
    skipped: list[dict[str, Any]]


def _message(role: str, content: str) -> dict[str, str]:
    return {"role": role, "content": content}


def _chat(sample: Sample) -> list[dict[str, str]]:
    """Prompt messages followed by every response segment as its own message."""
    messages = [_message(m.role, m.content) for m in sample.prompt]
    return messages + [_message(s.role, s.text) for s in sample.response]


def _extra(sample: Sample, index: int) -> dict[str, Any]:
    return {"index": index, "uid": sample.uid, "traj_uid": sample.traj_uid, "step": sample.step}


def rl_row(sample: Sample, index: int, ground_truth: str | None = None) -> dict[str, Any]:
    """One ``per_turn``/``multi_turn`` row."""
    ids = [s.token_ids for s in sample.response]
    response_ids = None if any(i is None for i in ids) else [t for i in ids for t in i or []]
    return {
        "data_source": sample.data_source,
        "prompt": [_message(m.role, m.content) for m in sample.prompt],
        "response": sample.response_text,
        "messages": _chat(sample),
        "reward": sample.reward,
        "outcome_reward": sample.outcome_reward,
        "ability": "math",
        "uid": sample.uid,
        "traj_uid": sample.traj_uid,
        "run_id": sample.run_id,
        "problem_id": sample.problem_id,
        "sample_index": sample.sample_index,
        "step": sample.step,
        "is_action_valid": sample.is_action_valid,
        "episode_reward": sample.episode_reward,
        "episode_length": sample.episode_length,
        "tool_callings": sample.tool_callings,
        "score": sample.score,
        "policy_version": sample.policy_version,
        "prompt_token_ids": sample.prompt_token_ids,
        "response_token_ids": response_ids if sample.layout == "per_turn" else None,
        "extra_info": _extra(sample, index),
        "model": sample.model,
        "ground_truth": ground_truth,
        "role": sample.role,
        "vote": sample.vote,
        "reward_source": sample.reward_source,
    }


def sft_row(sample: Sample, index: int, ground_truth: str | None = None) -> dict[str, Any]:
    """One ``sft`` row: a prompt/response pair of a correct trajectory."""
    users = [m.content for m in sample.prompt if m.role == "user"]
    return {
        "messages": _chat(sample),
        "prompt": [_message(m.role, m.content) for m in sample.prompt],
        "question": users[-1] if users else "",
        "answer": sample.response_text,
        "data_source": sample.data_source,
        "uid": sample.uid,
        "traj_uid": sample.traj_uid,
        "run_id": sample.run_id,
        "problem_id": sample.problem_id,
        "step": sample.step,
        "score": sample.score,
        "extra_info": _extra(sample, index),
        "model": sample.model,
        "ground_truth": ground_truth,
    }


def rows(samples: SampleSet, layout: str, ground_truths: Mapping[str, str | None] | None = None,
         ) -> list[dict[str, Any]]:
    """Table rows of ``samples`` built in ``layout``; ``ground_truths`` maps run ids to their reference answer."""
    make = sft_row if layout == "sft" else rl_row
    truths = ground_truths or {}
    return [make(s, i, truths.get(s.run_id)) for i, s in enumerate(samples.samples)]


def _schema(layout: str) -> Any:
    import pyarrow as pa

    msg = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
    extra = pa.struct(
        [
            ("index", pa.int64()),
            ("uid", pa.string()),
            ("traj_uid", pa.string()),
            ("step", pa.int64()),
        ]
    )
    if layout == "sft":
        types = [msg, msg, pa.string(), pa.string(), pa.string(), pa.string(), pa.string(),
                 pa.string(), pa.string(), pa.int64(), pa.float64(), extra, pa.string(), pa.string()]  # fmt: skip
        return pa.schema(list(zip(SFT_COLUMNS, types, strict=True)))
    ids = pa.list_(pa.int64())
    types = [pa.string(), msg, pa.string(), msg, pa.float64(), pa.float64(), pa.string(),
             pa.string(), pa.string(), pa.string(), pa.string(), pa.int64(), pa.int64(),
             pa.bool_(), pa.float64(), pa.int64(), pa.int64(), pa.float64(), pa.string(),
             ids, ids, extra, pa.string(), pa.string(), pa.string(), pa.float64(), pa.string()]  # fmt: skip
    return pa.schema(list(zip(RL_COLUMNS, types, strict=True)))


def write_rows(table_rows: list[dict[str, Any]], layout: str, fmt: str, out: Path) -> None:
    """Write rows as Parquet or JSON lines (parent folders are created)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "jsonl":
        with out.open("w", encoding="utf-8") as fh:
            for row in table_rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(table_rows, schema=_schema(layout)), out)


def export_trajectories(
    trajectories: Iterable[TrajectorySealed],
    *,
    layout: str,
    fmt: str,
    out: Path,
    options: SampleOptions | None = None,
    ground_truths: Mapping[str, str | None] | None = None,
) -> ExportReport:
    """Build samples of ``trajectories`` and write them to ``out`` (each row with its run's
    reference answer from ``ground_truths``, when given).

    Raises:
        ValueError: unknown ``fmt`` or ``layout``.
    """
    if fmt not in FORMATS:
        msg = f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}"
        raise ValueError(msg)
    trajs = list(trajectories)
    samples = build_many(trajs, layout, options)
    write_rows(rows(samples, layout, ground_truths), layout, fmt, out)
    return ExportReport(
        path=str(out),
        layout=layout,
        format=fmt,
        rows=len(samples.samples),
        trajectories=len(trajs),
        skipped=[msgspec.to_builtins(s) for s in samples.skipped],
    )
