"""The terminal timeline of `apollo show`: numbered 1..n, evolve lines labelled with round and branch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli.runs import timeline_lines
from events.record import Unreadable
from events.run import RunStarted
from tests.cli.support import DATASET, ROOT, apollo
from tests.evolve.support import RoleModel, run_evolve_records, standard_reply
from tests.replay.support import golden


def test_lines_are_numbered_in_order_with_unreadable_messages_unnumbered() -> None:
    """Events get 1..n whatever their stream sequences; an unreadable message sits in its place as '-'."""
    records = golden("good_code_then_answer")
    middle = records[2].seq
    lines = timeline_lines(records, [Unreadable(seq=middle, subject="apollo.run.x.model.responded", reason="bad")])
    numbers = [line.split()[0] for line in lines]
    assert numbers == ["1", "2", "3", "-", *(str(n) for n in range(4, len(records) + 1))]
    assert "UNREADABLE" in lines[3] and f"seq {middle}" in lines[3]


async def test_every_evolve_line_names_its_round_and_branch() -> None:
    """In an evolve run each line carries r<round> (and b:<branch> in branch runs) or 'run' for run-wide events."""
    records = await run_evolve_records(RoleModel(standard_reply()), evolve={"rounds": 2, "verifiers": 1})
    assert any(isinstance(r.event, RunStarted) and r.event.workflow == "evolve" for r in records)
    labels = [line.split()[2] for line in timeline_lines(records, [])]
    assert set(labels) == {"run", "r0", "r1"}
    model_lines = [line for line in timeline_lines(records, []) if "model.call_requested" in line]
    assert model_lines and all(line.split()[2] in {"r0", "r1"} for line in model_lines)


async def test_branch_runs_label_the_branch_too() -> None:
    """A multi-model evolve run's round lines name their branch."""
    branches = [{"branch_id": f"b{i}", "policy": {"model": f"p{i}"}} for i in range(2)]
    records = await run_evolve_records(RoleModel(standard_reply()), branches=branches,
                                       evolve={"rounds": 1, "verifiers": 1})
    lines = timeline_lines(records, [])
    rounds = [line for line in lines if "round.completed" in line]
    assert {" ".join(line.split()[2:4]) for line in rounds} == {"r0 b:b0", "r0 b:b1"}
    memory = [line for line in lines if "memory.written" in line]
    assert memory and all(line.split()[2] == "r0" for line in memory)


def test_reason_runs_have_no_round_column() -> None:
    """A plain reasoning run's lines are number, time, type, summary."""
    lines = timeline_lines(golden("good_code_then_answer"), [])
    assert lines[0].split()[2] == "problem.submitted"


async def test_sealed_trajectories_say_whose_they_are_and_their_vote() -> None:
    """An evolve round's verifier trajectory names the verifier and its vote; the policy's says its reward."""
    from engine.cli.render import summary
    from events.episode import TrajectorySealed

    records = await run_evolve_records(RoleModel(standard_reply()), evolve={"rounds": 1, "verifiers": 1})
    sealed = [summary(r.event) for r in records if isinstance(r.event, TrajectorySealed)]
    assert any(line.startswith("trajectory sealed (verifier 0):") and "vote" in line for line in sealed)
    assert any(line.startswith("trajectory sealed:") and "reward" in line for line in sealed)


def test_apollo_show_says_what_each_evolve_event_means_not_only_its_type(tmp_path: Path) -> None:
    """`apollo show` of an evolve run: round starts, verifier reports, verdicts and memory writes say what happened."""
    if not DATASET.exists():
        pytest.skip(f"{DATASET} is not here")
    data = tmp_path / "data"
    code, out, err = apollo(data, "run", "--workflow", "evolve", "--config",
                            str(ROOT / "examples" / "configs" / "evolve_single.yaml"), "--dataset", str(DATASET),
                            "--limit", "1", "--json")
    assert code == 0, err[-2000:]
    code, out, err = apollo(data, "runs", "--json")
    [run] = json.loads(out)
    code, out, err = apollo(data, "show", run["run_id"])
    assert code == 0, err[-2000:]
    rows = [line.split(None, 4) for line in out.splitlines()]
    bare = [row[3] for row in rows if len(row) < 5 or row[4].strip() == row[3]]
    assert bare == []
    verifiers = [row[4] for row in rows if row[3] == "verifier.reported"]
    assert verifiers and all(text.startswith("round ") and "verifier" in text for text in verifiers)
    assert any(row[3] == "verdict.reached" and "approve" in row[4] for row in rows)


def test_a_one_step_episode_reads_1_step_and_1_turn_and_a_one_run_dataset_1_run(tmp_path: Path) -> None:
    """A reply that answers at once: `show` says '1 step' and '1 turn', `run` says '(1 run, ...)', never '1 steps'."""
    script = tmp_path / "answer.json"
    script.write_text(json.dumps({"rules": [{"reply": "<answer>\\boxed{5}</answer>"}]}))
    dataset = tmp_path / "one.jsonl"
    dataset.write_text(json.dumps({"id": "a", "problem": "What is 2 + 3?", "answer": "5"}) + "\n")
    data = tmp_path / "data"
    code, out, err = apollo(data, "run", "--dataset", str(dataset), "--model", f"scripted:{script}")
    assert code == 0, err[-2000:]
    assert "(1 run, settings digest " in out
    code, out, err = apollo(data, "runs", "--json")
    [run] = json.loads(out)
    code, out, err = apollo(data, "show", run["run_id"])
    assert code == 0, err[-2000:]
    assert "episode ended: answer, reward 1, 1 step, 0 invalid" in out
    assert "trajectory sealed: 1 turn, reward 1" in out
    assert "1 steps" not in out and "1 turns" not in out
