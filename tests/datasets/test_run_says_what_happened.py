"""`apollo run` says whose numbers it prints, why samples failed, and prints no number without data.

Run as a user runs it (``python -m engine`` in the test's directory, so the default
``results/`` lands there), against the fake OpenAI-compatible server of this test's loop.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from engine.models.fake_server import FakeOpenAIServer
from handlers.ports import ModelError
from tests.datasets.run_support import ANSWER, ROOT, SCRIPTED, apollo_in, free_port, jsonl_rows, sums_dataset

SAMPLING = ["--temperature", "0.6", "--top-p", "0.95", "--top-k", "20", "--max-tokens", "512"]


def _refuse(messages: object) -> str:
    """A server that turns every request down with HTTP 400, as one does a model it cannot run."""
    raise ModelError("bad_response", "model 'm' does not support chat completions")


async def test_each_model_and_settings_get_their_own_results_file_and_a_header_naming_them(tmp_path: Path) -> None:
    """Two models by default write two files, neither replacing the other; the header names model, endpoint,
    sampling and digest; an explicit --out that held another model's rows says it replaced them."""
    data = str(sums_dataset(tmp_path))
    async with FakeOpenAIServer(lambda messages: ANSWER, models=("model-a", "model-b")) as server:
        base = ["run", "--dataset", data, "--model-url", server.base_url, *SAMPLING]
        code, out_a, err = await apollo_in(tmp_path, *base, "--model", "model-a")
        assert code == 0, err[-2000:]
        code, out_b, err = await apollo_in(tmp_path, *base, "--model", "model-b")
        assert code == 0, err[-2000:]
        files = sorted((tmp_path / "results").glob("sums-reason-model-*.jsonl"))
        assert [path.name.split("-")[3] for path in files] == ["a", "b"]
        assert [{row["model"] for row in jsonl_rows(path)} for path in files] == [{"model-a"}, {"model-b"}]
        digest = jsonl_rows(files[0])[0]["settings_digest"]
        assert files[0].name == f"sums-reason-model-a-{digest}.jsonl"
        header = out_a.split("\n\n")[0].splitlines()
        assert header == [f"policy model model-a at {server.base_url}",
                          "  sampling: temperature 0.6, top-p 0.95, top-k 20, max tokens 512",
                          f"settings digest {digest} (workflow reason)"]
        assert "policy model model-b" in out_b

        code, _, err = await apollo_in(tmp_path, *base, "--model", "model-a", "--out", "mine.jsonl")
        assert code == 0 and "replaced" not in err
    code, out, err = await apollo_in(tmp_path, "run", "--dataset", data, "--model", SCRIPTED, "--limit", "1",
                                     "--out", "mine.jsonl")
    assert code == 0, err[-2000:]
    assert f"replaced 2 earlier row(s) of mine.jsonl that this run does not write (2 of model model-a, " \
           f"settings digest {digest})" in err
    assert "(scripted demo model: canned replies, not a real model)" in out.splitlines()[0]


async def test_with_every_sample_failed_the_figures_are_n_a_and_each_reason_is_named(tmp_path: Path) -> None:
    """HTTP 400 on every call: no 0.00% anywhere, finished 0, a note saying nothing was completed; the reason
    with its count and a run to show, marked as one a retry cannot fix, and no advice to just run it again."""
    config = tmp_path / "quick.yaml"
    config.write_text("models:\n  policy:\n    max_retries: 0\n")
    async with FakeOpenAIServer(_refuse, models=("m",)) as server:
        command = ["--config", str(config), "run", "--dataset", str(sums_dataset(tmp_path)), "--model", "m",
                   "--model-url", server.base_url, "--samples", "2"]
        code, out, err = await apollo_in(tmp_path, *command)
    assert code == 1
    [row] = [line for line in out.splitlines() if line.startswith("sums ")][:1]
    assert row.split()[1:9] == ["2", "4", "0", "0", "4", "n/a", "n/a", "n/a"]
    assert "0.00%" not in out
    assert "note: no sample was completed (4 could not be" in out
    assert re.search(r"^  sums +n/a \(no completed sample\)$", out, re.MULTILINE)
    assert "apollo run: 4 of 4 runs could not be completed:" in err
    [reason] = [line for line in err.splitlines() if line.startswith("  4 x ")]
    assert "bad_response: HTTP 400: model 'm' does not support chat completions" in reason
    assert "(e.g. apollo show sums_reason-" in reason and reason.endswith("[a retry fails the same way]")
    assert "a retry with the same model server and settings fails the same way" in err
    assert "run the same command again to retry them" not in err

    code, out, _ = await apollo_in(tmp_path, *command, "--no-retry-failed", "--no-probe", "--json")
    report = json.loads(out.splitlines()[-1])
    assert code == 1
    assert (report["overall"]["finished"], report["overall"]["avg_at_k"], report["overall"]["pass_at_k"]) == (
        0, None, None)
    assert report["sampling"]["overall"]["avg_ci"] is None
    assert [(f["count"], f["retry_can_help"]) for f in report["failures"]] == [(4, False)]


async def test_evolve_rows_count_the_policy_steps_of_every_round(tmp_path: Path) -> None:
    """An evolve run has no main episode: its steps are its policy's over the rounds, not 0."""
    code, out, err = await apollo_in(
        tmp_path, "run", "--workflow", "evolve", "--dataset", str(sums_dataset(tmp_path)), "--limit", "1",
        "--config", str(ROOT / "examples" / "configs" / "evolve_single.yaml"), "--model", SCRIPTED, "--json")
    assert code == 0, err[-2000:]
    report = json.loads(out.splitlines()[-1])
    [row] = jsonl_rows(tmp_path / report["results"])
    assert row["steps"] >= 3 and report["overall"]["mean_steps"] == row["steps"]


async def test_a_refused_endpoint_starts_no_runs_and_says_of_none_that_they_start(tmp_path: Path) -> None:
    """The probe refuses a dead server: neither 'new runs' nor 'retrying' is said before the refusal, since
    no run, new or retried, is started."""
    data = str(sums_dataset(tmp_path))
    config = tmp_path / "quick.yaml"
    config.write_text("models:\n  policy:\n    max_retries: 0\n")
    code, _, err = await apollo_in(tmp_path, "run", "--dataset", data, "--model", SCRIPTED)
    assert code == 0, err[-2000:]
    dead = ["--config", str(config), "run", "--dataset", data, "--model", "m",
            "--model-url", f"http://127.0.0.1:{free_port()}/v1"]
    code, _, err = await apollo_in(tmp_path, *dead, "--no-probe")
    assert code == 1 and "new runs" in err  # two failed runs of new settings, to be retried

    code, out, err = await apollo_in(tmp_path, *dead)
    assert code == 1
    assert out == ""
    assert "new runs" not in err and "retrying" not in err
    assert err.strip().splitlines()[-1].endswith("no runs were started (--no-probe skips this check)")


async def test_the_pass_at_k_curve_names_every_k_from_1_to_k(tmp_path: Path) -> None:
    """--samples 4: the unbiased pass@k line has @1 @2 @3 @4, as the README says, not only powers of two."""
    code, out, err = await apollo_in(tmp_path, "run", "--dataset", str(sums_dataset(tmp_path)), "--samples", "4",
                                     "--model", SCRIPTED)
    assert code == 0, err[-2000:]
    curve = out.split("pass@k (unbiased estimator, Chen et al. 2021)\n")[1].splitlines()[0]
    assert re.findall(r"@(\d+)", curve) == ["1", "2", "3", "4"]
