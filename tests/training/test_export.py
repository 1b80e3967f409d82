"""Exports: files readable by pyarrow and by verl's dataset loaders; the CLI command."""

from __future__ import annotations

import argparse
import json

import pyarrow.parquet as pq
import pytest

from engine.cli.export import register
from events import encode
from replay.training.export import RL_COLUMNS, SFT_COLUMNS, export_trajectories
from tests.training.conftest import trajectory, turn


def _tool_turn():
    return turn(1, "python print 1 + 1", observation="output 2", tool="python")


def _trajs():
    return [
        trajectory("g1", 0, reward=1.0, turns=[_tool_turn(), turn(2, "the answer is 2")]),
        trajectory("g1", 1, reward=0.0, turns=[turn(1, "the answer is 3", valid=False)]),
        trajectory("g1", 2, complete=False, done_reason="model_failed"),
    ]  # fmt: skip


@pytest.mark.parametrize("layout", ["per_turn", "multi_turn"])
def test_rl_parquet_has_documented_columns(tmp_path, layout):
    """RL exports carry exactly the documented columns; failures are reported, not written."""
    out = tmp_path / f"{layout}.parquet"
    report = export_trajectories(_trajs(), layout=layout, fmt="parquet", out=out)
    table = pq.read_table(out)
    assert tuple(table.column_names) == RL_COLUMNS
    assert table.num_rows == report.rows == (3 if layout == "per_turn" else 2)
    assert [s["traj_uid"] for s in report.skipped] == ["traj-g1-2"]
    rows = table.to_pylist()
    if layout == "per_turn":
        assert [r["reward"] for r in rows] == pytest.approx([1.0, 1.0, -0.1])
        assert rows[0]["prompt"][0] == {"role": "system", "content": "you solve math problems"}
    else:
        roles = [m["role"] for m in rows[0]["messages"]]
        assert roles == ["system", "user", "assistant", "user", "assistant"]


def test_sft_jsonl_has_documented_columns(tmp_path):
    """SFT rows are prompt/response pairs of correct trajectories only."""
    out = tmp_path / "sft.jsonl"
    export_trajectories(_trajs(), layout="sft", fmt="jsonl", out=out)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [tuple(r) for r in rows] == [SFT_COLUMNS, SFT_COLUMNS]
    assert [r["answer"] for r in rows] == ["python print 1 + 1", "the answer is 2"]
    assert rows[0]["messages"][-1] == {"role": "assistant", "content": "python print 1 + 1"}


def test_unknown_format_is_rejected(tmp_path):
    """Only parquet and jsonl are written."""
    with pytest.raises(ValueError, match="unknown format"):
        export_trajectories(_trajs(), layout="sft", fmt="csv", out=tmp_path / "x.csv")


def test_verl_rl_dataset_reads_the_parquet(tmp_path, tokenizer, monkeypatch):
    """verl's RLHFDataset loads the per-turn export with its default ``prompt`` key."""
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf"))
    from omegaconf import OmegaConf
    from verl.utils.dataset.rl_dataset import RLHFDataset

    out = tmp_path / "rl.parquet"
    export_trajectories(_trajs(), layout="per_turn", fmt="parquet", out=out)
    config = OmegaConf.create({"filter_overlong_prompts": False, "cache_dir": str(tmp_path / "c")})
    dataset = RLHFDataset(str(out), tokenizer, config)
    assert len(dataset) == 3
    item = dataset[0]
    assert item["raw_prompt"][1]["role"] == "user"
    assert item["index"] == 0 and item["data_source"] == "math500"


def test_verl_multiturn_sft_dataset_reads_the_sft_parquet(tmp_path, tokenizer):
    """verl's MultiTurnSFTDataset loads ``messages`` and masks all but the assistant reply."""
    from omegaconf import OmegaConf
    from verl.utils.dataset.multiturn_sft_dataset import MultiTurnSFTDataset

    out = tmp_path / "sft.parquet"
    export_trajectories(_trajs(), layout="sft", fmt="parquet", out=out)
    config = OmegaConf.create({"max_length": 64, "truncation": "right"})
    dataset = MultiTurnSFTDataset(str(out), tokenizer, config)
    item = dataset[1]
    trained = item["input_ids"][item["loss_mask"].bool()].tolist()
    expected = tokenizer.encode("the answer is 2", add_special_tokens=False)
    assert trained[: len(expected)] == expected


def _cli(argv):
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(argv)
    return args.handler(args)


def test_cli_exports_from_events_file(tmp_path, capsys):
    """``export --events`` reads encoded events, skips other lines, writes the file."""
    events = tmp_path / "events.jsonl"
    lines = [encode(t).decode() for t in _trajs()] + ["{not json", ""]
    events.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.parquet"
    code = _cli(
        [
            "export",
            "--format",
            "parquet",
            "--layout",
            "per_turn",
            "--out",
            str(out),
            "--events",
            str(events),
        ]
    )
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary == {
        "out": str(out),
        "rows": 3,
        "trajectories": 3,
        "skipped": 1,
        "unreadable_lines": 1,
    }
    assert pq.read_table(out).num_rows == 3


def test_cli_reports_missing_events_file(tmp_path, capsys):
    """A missing input file is a clear error, exit code 1."""
    code = _cli(
        ["export", "--out", str(tmp_path / "o.jsonl"), "--events", str(tmp_path / "nope.jsonl")]
    )
    assert code == 1
    assert "cannot read" in capsys.readouterr().err


def test_cli_rejects_unknown_layout():
    """argparse refuses a layout that does not exist."""
    with pytest.raises(SystemExit):
        _cli(["export", "--layout", "bogus", "--out", "x"])
