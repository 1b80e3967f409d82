"""`apollo report` never pools models or settings, gives `apollo run`'s own figures, and reads the
training demo's metrics.jsonl, run as a user types it."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from engine.models.fake_server import FakeOpenAIServer
from tests.datasets.run_support import ANSWER, SCRIPTED, apollo_in, sums_dataset


def _summary_rows(page: str) -> list[list[str]]:
    table = page.split("<table class='groups'>")[1].split("</table>")[0]
    rows = re.findall(r"<tr>(.*?)</tr>", table)[1:]
    return [[html.unescape(cell) for cell in re.findall(r"<td>(.*?)</td>", row)] for row in rows]


async def test_a_bare_report_gives_each_model_and_settings_its_own_row_with_run_s_interval(tmp_path: Path) -> None:
    """A real model (all right) and the scripted one on the same dataset, and a solve: three rows, not one
    pooled accuracy; each dataset row's Avg@k, interval and SE are those `apollo run` printed."""
    data = str(sums_dataset(tmp_path))
    printed = {}
    async with FakeOpenAIServer(lambda messages: ANSWER, models=("model-a",)) as server:
        for model in ("model-a", SCRIPTED):
            code, out, err = await apollo_in(tmp_path, "run", "--dataset", data, "--samples", "2", "--model", model,
                                             "--model-url", server.base_url, "--json")
            assert code == 0, err[-2000:]
            report = json.loads(out.splitlines()[-1])
            printed[report["settings_digest"]] = report["sampling"]["overall"]
    code, _, err = await apollo_in(tmp_path, "solve", "What is 1 + 1?", "--answer", "2", "--model", SCRIPTED)
    assert code == 0, err[-2000:]

    code, _, err = await apollo_in(tmp_path, "report", "--out", "page.html")
    assert code == 0, err[-2000:]
    assert "in 3 model/settings group(s)" in err
    rows = _summary_rows((tmp_path / "page.html").read_text())
    assert sorted((row[0].split("/")[-1], row[2]) for row in rows) == [
        ("demo.json", "cli"), ("demo.json", "sums"), ("model-a", "sums")]
    for row in rows:
        if row[1] in printed:
            stats = printed[row[1]]
            assert row[7] == f"{100 * stats['avg_at_k']:.2f}% (k=2)"
            assert row[8] == f"[{100 * stats['avg_ci'][0]:.2f}, {100 * stats['avg_ci'][1]:.2f}]"
            assert row[9] == f"{100 * stats['avg_se']:.2f}"
    [solved] = [row for row in rows if row[1] == "single runs"]
    assert solved[3:5] == ["1", "1"]


async def test_report_training_reads_the_metrics_jsonl_train_demo_writes(tmp_path: Path) -> None:
    """Lines as `apollo train --demo` writes them (step, reward_mean, a list of trajectories) plot per step."""
    metrics = tmp_path / "apollo-train-demo" / "metrics.jsonl"
    metrics.parent.mkdir()
    metrics.write_text("".join(json.dumps({"step": step, "reward_mean": step / 4, "loss": 0.1, "trajectories": ["t"],
                                           "staleness_max": None}, sort_keys=True) + "\n" for step in (1, 2)))
    code, _, err = await apollo_in(tmp_path, "report", "--training", str(metrics), "--out", "train.html")
    assert code == 0, err[-2000:]
    assert "1 training series" in err
    assert "<section data-plot='training'><h2>Training reward per step</h2><figure><svg" in (
        tmp_path / "train.html").read_text()
