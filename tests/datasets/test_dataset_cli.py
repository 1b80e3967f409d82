"""`apollo run --dataset` end to end: settings identity, retries, the endpoint probe, results rows.

Each command runs as a user runs it (``python -m engine``), with its embedded real
nats-server kept in a per-test data dir, against the fake OpenAI-compatible server
served from this test's event loop.
"""

from __future__ import annotations

import json
from pathlib import Path

from engine.models.fake_server import FakeOpenAIServer
from tests.datasets.run_support import ANSWER, ROOT, apollo_in, free_port, jsonl_rows, sums_dataset


async def test_changing_the_model_makes_new_runs_never_the_old_numbers(tmp_path: Path) -> None:
    """Same command twice resumes with no model call; another --model runs anew and says so."""
    data = sums_dataset(tmp_path)
    async with FakeOpenAIServer(lambda messages: ANSWER, models=("model-a", "model-b")) as server:
        base = ["run", "--dataset", str(data), "--samples", "2", "--model-url", server.base_url,
                "--temperature", "0.6", "--top-p", "0.95", "--top-k", "20", "--max-tokens", "512",
                "--out", "out.jsonl", "--json"]
        code, out, err = await apollo_in(tmp_path, *base, "--model", "model-a")
        assert code == 0, err[-2000:]
        first = json.loads(out.splitlines()[-1])
        calls = server.stats()["requests_by_model"]
        assert calls["model-a"] > 0
        assert {body["temperature"] for body in server.bodies} == {0.6}

        code, out, err = await apollo_in(tmp_path, *base, "--model", "model-a")
        assert code == 0, err[-2000:]
        assert "resuming, 4/4 runs already finished" in err
        assert server.stats()["requests_by_model"] == calls
        assert json.loads(out.splitlines()[-1])["settings_digest"] == first["settings_digest"]

        code, out, err = await apollo_in(tmp_path, *base, "--model", "model-b")
        assert code == 0, err[-2000:]
        second = json.loads(out.splitlines()[-1])
        assert "settings differ from the earlier run of this dataset: new runs" in err
        assert "resuming" not in err
        assert second["settings_digest"] != first["settings_digest"]
        assert server.stats()["requests_by_model"]["model-b"] > 0
    rows = jsonl_rows(tmp_path / "out.jsonl")
    assert {row["model"] for row in rows} == {"model-b"}
    row = rows[0]
    assert row["sampling"] == {"temperature": 0.6, "top_p": 0.95, "top_k": 20, "max_tokens": 512}
    assert (row["ground_truth"], row["answer"], row["correct"], row["response"]) == ("5", "5", True, ANSWER)
    assert row["question"] == "What is 2 + 3?" and row["grade_detail"] and row["steps"] == 1
    assert row["completion_tokens"] > 0 and row["latency_s"] is not None


async def test_runs_that_could_not_be_completed_are_retried_on_resume(tmp_path: Path) -> None:
    """A dead server: failed apart from wrong, exit 1; once it is back, a re-run retries them."""
    data = sums_dataset(tmp_path)
    port = free_port()
    config = tmp_path / "quick.yaml"
    config.write_text("models:\n  policy:\n    max_retries: 0\n    timeout: 5\n")
    command = ["--config", str(config), "run", "--dataset", str(data), "--model", "fake-model",
               "--model-url", f"http://127.0.0.1:{port}/v1", "--out", "out.jsonl", "--json"]
    code, out, err = await apollo_in(tmp_path, *command, "--no-probe")
    assert code == 1
    overall = json.loads(out.splitlines()[-1])["overall"]
    assert (overall["failed"], overall["wrong"]) == (2, 0)
    assert "apollo run: 2 of 2 runs could not be completed:" in err
    assert "  2 x connection: cannot reach the model server: connection refused" in err
    assert "apollo run: run the same command again to retry them" in err  # a refusal may pass next time
    failed_ids = {row["run_id"] for row in jsonl_rows(tmp_path / "out.jsonl")}

    async with FakeOpenAIServer(lambda messages: ANSWER, port=port):
        code, out, err = await apollo_in(tmp_path, *command)
    assert code == 0, err[-2000:]
    assert "retrying 2 run(s) that could not be completed (model_failed 2)" in err
    assert json.loads(out.splitlines()[-1])["overall"]["accuracy"] == 1.0
    rows = jsonl_rows(tmp_path / "out.jsonl")
    assert {row["attempt"] for row in rows} == {1}
    assert all(row["run_id"].endswith("-r1") for row in rows)
    code, out, _ = await apollo_in(tmp_path, "show", sorted(failed_ids)[0], "--json")
    assert code == 0 and "model.call_failed" in out  # the failed attempt stays in the log


async def test_no_retry_failed_keeps_failed_runs(tmp_path: Path) -> None:
    """--no-retry-failed reports the earlier failures again instead of retrying them."""
    data = sums_dataset(tmp_path)
    config = tmp_path / "quick.yaml"
    config.write_text("models:\n  policy:\n    max_retries: 0\n    timeout: 5\n")
    command = ["--config", str(config), "run", "--dataset", str(data), "--limit", "1", "--model", "m",
               "--model-url", f"http://127.0.0.1:{free_port()}/v1", "--no-probe", "--json"]
    assert (await apollo_in(tmp_path, *command))[0] == 1
    code, out, err = await apollo_in(tmp_path, *command, "--no-retry-failed")
    assert code == 1
    assert "retrying" not in err and "resuming, 1/1" in err
    assert json.loads(out.splitlines()[-1])["overall"]["failed"] == 1


async def test_a_dead_endpoint_stops_the_run_before_it_starts(tmp_path: Path) -> None:
    """The probe fails with one line naming the model and URL; no run is submitted."""
    url = f"http://127.0.0.1:{free_port()}/v1"
    code, out, err = await apollo_in(tmp_path, "run", "--dataset", str(sums_dataset(tmp_path)), "--model", "qwen",
                                   "--model-url", url)
    assert code == 1 and out == ""
    [line] = [line for line in err.splitlines() if "error" in line]
    assert line.startswith(f"apollo: error: model 'qwen' at {url} is not reachable")
    assert "no runs were started" in line
    code, out, _ = await apollo_in(tmp_path, "runs", "--json")
    assert code == 0 and "sums" not in out


async def test_a_model_the_server_does_not_serve_stops_the_run(tmp_path: Path) -> None:
    """The probe compares --model with the server's model list."""
    async with FakeOpenAIServer(lambda messages: ANSWER, models=("served",), refuse_unlisted=True) as server:
        code, _, err = await apollo_in(tmp_path, "run", "--dataset", str(sums_dataset(tmp_path)),
                                     "--model", "typo", "--model-url", server.base_url)
        assert server.stats()["requests_total"] == 0
    assert code == 1
    assert "does not serve that model (it serves: served)" in err


async def test_the_eval_config_prints_avg_and_pass_with_intervals(tmp_path: Path) -> None:
    """examples/configs/eval_aime.yaml on AIME 2024 (2 problems, 2 samples, scripted model)."""
    code, out, err = await apollo_in(
        tmp_path, "run", "--dataset", str(ROOT.parent / "shared" / "data" / "aime24.jsonl"), "--limit", "2",
        "--samples", "2", "--config", str(ROOT / "examples" / "configs" / "eval_aime.yaml"),
        "--model", f"scripted:{ROOT / 'examples' / 'scripted' / 'demo.json'}", "--out", "out.jsonl")
    assert code == 0, err[-2000:]
    assert "Avg@2" in out and "Pass@2" in out and "95% CI" in out and "pass@k (unbiased" in out
    rows = jsonl_rows(tmp_path / "out.jsonl")
    assert len(rows) == 4
    assert rows[0]["sampling"] == {"temperature": 0.6, "top_p": 0.95, "top_k": 20, "max_tokens": 8192}
    assert (rows[0]["protocol"], rows[0]["grader"]) == ("reference_test", "reference")
