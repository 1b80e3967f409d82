"""`apollo regrade` as a user runs it: a dataset run recorded with a scripted model, regraded
with another grader (no model call), the flip report, idempotence, export, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from handlers.grading.version import grader_version
from tests.cli.support import apollo

pytestmark = pytest.mark.nats


def _dataset(tmp_path: Path) -> Path:
    """Three made-up problems: one answered ``5.0`` for gold ``5`` (right for math, wrong for
    exact), one answered exactly, one never answered."""
    path = tmp_path / "sums.jsonl"
    rows = [{"id": "a", "problem": "What is 2 + 3?", "answer": "5"},
            {"id": "b", "problem": "What is 10 - 5?", "answer": "5"},
            {"id": "c", "problem": "What is 1 + 1?", "answer": "2"}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _script(tmp_path: Path) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"rules": [
        {"match": "2 \\+ 3", "reply": "<answer>\\boxed{5.0}</answer>"},
        {"match": "10 - 5", "reply": "<answer>\\boxed{5}</answer>"},
        {"reply": "I would rather not say."},
    ]}))
    return path


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str]]:
    """A data dir holding the dataset run (graded by math), the work dir, and the runs' ids."""
    work = tmp_path_factory.mktemp("regrade")
    (work / "short.yaml").write_text("episode:\n  max_steps: 2\n")
    code, out, err = apollo(work / "data", "run", "--dataset", str(_dataset(work)), "--model",
                            f"scripted:{_script(work)}", "--config", str(work / "short.yaml"), "--json")
    assert code == 0, err[-2000:]
    digest = json.loads(out.splitlines()[-1])["settings_digest"]
    return work / "data", work, [f"sums_reason-{digest}-{row}-s0" for row in "abc"]


def _events(data: Path, run: str) -> list[dict]:
    code, out, err = apollo(data, "show", run, "--json")
    assert code == 0, err[-2000:]
    return [json.loads(line)["event"] for line in out.splitlines()]


def test_regrade_with_another_grader_reports_flips_records_once_and_resumes(
    recorded: tuple[Path, Path, list[str]],
) -> None:
    """A first regrade of one run stands for an interrupted one; the whole regrade then computes
    only the rest, says so, and a third adds nothing."""
    data, work, (run_a, run_b, run_c) = recorded

    code, out, err = apollo(data, "regrade", run_a[:-2], "--grader", "exact", "--json")
    assert code == 0, err[-2000:]
    assert json.loads(out)["regraded"] == 1

    code, out, err = apollo(data, "regrade", "--grader", "exact", "--json")
    assert code == 0, err[-2000:]
    report = json.loads(out)
    assert (report["regraded"], report["already"], report["kept"]) == (1, 1, 1)
    assert report["versions"] == {"exact": grader_version("exact")}
    [source] = report["sources"]
    assert (source["dataset"], source["grades"], source["correct_before"], source["correct_after"]) == (
        "sums", 3, 2, 1)
    [flip] = source["to_wrong"]
    assert (flip["run_id"], flip["answer"], flip["ground_truth"], flip["old_grader"]) == (run_a, "5.0", "5", "math")
    assert source["to_correct"] == []
    assert "1 grades were already re-graded at this version" in err
    assert f"run {run_c}: no answer to grade (its grade of 0 stands); nothing recorded" in err
    assert "Traceback" not in err

    code, out, err = apollo(data, "regrade", "--grader", "exact")
    assert code == 0, err[-2000:]
    assert "0 re-graded now, 2 already re-graded at this version" in out
    assert f"{run_a}  answer '5.0'  gold '5'  (math 1 -> exact 0)" in out

    events = _events(data, run_a)
    [graded] = [e for e in events if e["type"] == "answer.graded"]
    [regraded] = [e for e in events if e["type"] == "answer.regraded"]
    assert (graded["grader"], graded["grader_version"]) == ("math", grader_version("math"))
    assert (regraded["regraded_id"], regraded["old_score"], regraded["new_score"]) == (graded["event_id"], 1.0, 0.0)
    assert (regraded["grader"], regraded["grader_version"], regraded["reward"]) == ("exact", grader_version("exact"),
                                                                                    0.0)

    out_file = work / "regraded.jsonl"
    code, out, err = apollo(data, "export", "--format", "jsonl", "--out", str(out_file), "--reward-source",
                            "regraded")
    assert code == 0, err[-2000:]
    rows = {row["run_id"]: row for row in map(json.loads, out_file.read_text().splitlines())}
    assert {run: (row["outcome_reward"], row["score"]) for run, row in rows.items()} == {
        run_a: (0.0, 0.0), run_b: (1.0, 1.0), run_c: (0.0, 0.0)}
    assert {row["reward_source"] for row in rows.values()} == {"regraded"}


def test_an_unknown_grader_is_one_line_naming_the_built_in_ones(recorded: tuple[Path, Path, list[str]]) -> None:
    """An unknown grader is refused in one line that names the built-in graders."""
    data, _, _ = recorded
    code, out, err = apollo(data, "regrade", "--grader", "lenient")
    assert code == 2 and out == ""
    assert err.strip() == ("apollo regrade: unknown grader 'lenient' (built in: choice, exact, hendrycks, math, "
                           "math_verify, reference, reference_evolve)")


def test_an_unknown_run_is_one_line(recorded: tuple[Path, Path, list[str]]) -> None:
    """Regrading an unknown run fails with one line and no traceback."""
    data, _, _ = recorded
    code, _, err = apollo(data, "regrade", "no-such-run", "--grader", "exact")
    assert code == 1
    assert "apollo regrade: unknown run 'no-such-run': no events recorded" in err and "Traceback" not in err


def test_a_run_its_model_server_failed_is_no_grade_of_0_in_the_flip_report(tmp_path: Path) -> None:
    """Regrade leaves out a run its model server failed (listed failed, no score): no grade, named on stderr."""
    from engine.nats.server import free_port

    data = tmp_path / "data"
    (tmp_path / "no-retries.yaml").write_text("models:\n  policy:\n    max_retries: 0\n")
    code, _, err = apollo(data, "solve", "What is 2 + 3?", "--answer", "5", "--run-id", "solve-right",
                          "--model", f"scripted:{_script(tmp_path)}")
    assert code == 0, err[-2000:]
    code, _, err = apollo(data, "solve", "What is 2 + 3?", "--answer", "5", "--run-id", "solve-refused", "--no-probe",
                          "--model", "m", "--model-url", f"http://127.0.0.1:{free_port()}/v1",
                          "--config", str(tmp_path / "no-retries.yaml"))
    assert code == 1, err[-2000:]
    code, out, err = apollo(data, "regrade", "--json")
    assert code == 0, err[-2000:]
    report = json.loads(out)
    [source] = report["sources"]
    assert (source["grades"], source["correct_before"], source["accuracy_before"]) == (1, 1, 1.0)
    assert (report["kept"], report["skipped"]) == (0, {"not_completed": ["solve-refused"]})
    assert "run solve-refused: could not be completed" in err
