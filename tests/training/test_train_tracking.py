"""The example trainer logs each step's loss and reward to the trackers; `apollo report` plots them."""

from __future__ import annotations

import csv

from engine.cli.report import read_csv, render_report
from engine.cli.tracking import open_trackers
from replay.report_data import report_data
from replay.training import InMemoryRolloutSource, SubscriptionOptions
from tests.training.test_train_example import _example, _group, _tiny_model


async def test_each_training_step_logs_loss_and_mean_reward(tmp_path, tokenizer):
    """Two groups, two steps: the CSV has a row per step with the batch's mean reward (0.5 here)."""
    example = _example()
    source = InMemoryRolloutSource(_group("a") + _group("b"))
    opts = SubscriptionOptions(group_size=2, fetch_timeout=0.0, idle_timeout=0.0, heartbeat_interval=0)
    trackers = open_trackers(tmp_path / "metrics.csv")
    losses = await example.train(source, _tiny_model(tokenizer), tokenizer, checkpoint_dir=tmp_path / "ckpt",
                                 options=opts, trackers=trackers)
    trackers.close()
    rows = list(csv.DictReader((tmp_path / "metrics.csv").open()))
    assert [row["step"] for row in rows] == ["1", "2"] and len(losses) == 2
    assert [float(row["loss"]) for row in rows] == losses
    assert all(float(row["reward/mean"]) == 0.5 and float(row["trajectories"]) == 2 for row in rows)
    page = render_report(report_data([], [], read_csv(tmp_path / "metrics.csv")))
    assert "<section data-plot='training'><h2>Training reward per step</h2><figure><svg" in page
