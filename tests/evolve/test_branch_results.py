"""K-branch evolve: per-branch results in the output, and the reference's final-answer choice (spec §7)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from events import RoundCompleted, RunCompleted
from handlers.evolve.branches import branch_results, reference_choice
from handlers.evolve.round_accuracy import branch_summary, evolve_metrics, render
from handlers.run_settings import ModelSpec
from replay.verify import verify_run
from tests.evolve.support import RoleModel, of, run_evolve_records, standard_reply

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def completed(branch: str | None, round_: int, answer: str | None, majority: int | None,
              correct: float | None) -> RoundCompleted:
    return RoundCompleted(event_id=uuid.uuid4().hex, run_id="r", occurred_at=NOW, round=round_,
                          branch=branch, answer=answer, majority=majority, correct=correct,
                          approvals=majority or 0, verifiers=1)


def test_the_verdict_of_the_last_round_outranks_the_success_rate() -> None:
    """A branch whose last round was approved beats one with more correct rounds but a rejection."""
    rounds = [completed("a", 0, "7", 1, 1.0), completed("a", 1, "7", 0, 1.0),
              completed("b", 0, "8", 0, 0.0), completed("b", 1, "8", 1, 0.0)]
    chosen = reference_choice(branch_results(rounds, ["a", "b"]))
    assert chosen is not None and (chosen.branch, chosen.answer) == ("b", "8")


def test_equal_verdicts_go_to_the_higher_success_rate_then_to_config_order() -> None:
    """Ties on the verdict: the higher share of rounds graded correct; full ties: the earlier branch."""
    rounds = [completed("a", 0, "7", 1, 0.0), completed("b", 0, "8", 1, 1.0), completed("c", 0, "9", 1, 1.0)]
    assert reference_choice(branch_results(rounds, ["a", "b", "c"])).branch == "b"  # type: ignore[union-attr]
    assert reference_choice(branch_results(rounds, ["a", "c", "b"])).branch == "c"  # type: ignore[union-attr]


def test_branches_without_an_answer_are_never_chosen() -> None:
    """A branch whose last round gave no answer is skipped; none with an answer: no choice."""
    rounds = [completed("a", 0, None, 1, None), completed("b", 0, "8", 0, 0.0)]
    assert reference_choice(branch_results(rounds, ["a", "b"])).branch == "b"  # type: ignore[union-attr]
    assert reference_choice(branch_results(rounds[:1], ["a"])) is None


def test_a_branch_result_is_its_last_round() -> None:
    """Answer, verdict and grade come from the branch's last round; the success rate from all of them."""
    [result] = branch_results([completed("a", 1, "5", 1, 1.0), completed("a", 0, "4", 0, 0.0)], ["a"])
    assert (result.answer, result.verdict, result.correct, result.rounds, result.success_rate) == (
        "5", 1, 1.0, 2, 0.5)


class BranchModel(RoleModel):
    """Branch ``good`` answers 42 (the truth), branch ``bad`` answers 41; every verifier approves."""

    def client_for(self, role: str, spec: ModelSpec, *, branch: str | None = None) -> Any:
        answer = "42" if branch == "good" else "41"
        return super().client_for(role, spec, branch=branch) if role != "policy" else _Fixed(answer)


class _Fixed:
    def __init__(self, answer: str) -> None:
        self.answer = answer

    async def complete(self, messages: Any, params: Any) -> Any:
        from handlers.ports import ModelReply

        return ModelReply(text=f"<answer>\\boxed{{{self.answer}}}</answer>", model="fake-policy")


async def branch_run(final_answer: str) -> list[Any]:
    branches = [{"branch_id": "bad"}, {"branch_id": "good"}]
    return await run_evolve_records(
        BranchModel(standard_reply()), branches=branches,
        evolve={"rounds": 2, "verifiers": 1, "final_answer": final_answer, "branch_max_workers": 1},
    )


@pytest.mark.parametrize(("rule", "answer"), [("reference", "42"), ("best_vote", "42"), ("last", "42")])
async def test_the_run_reports_the_answer_its_rule_chooses(rule: str, answer: str) -> None:
    """Both branches approved: the reference rule picks the branch graded right; the run's answer is its."""
    records = await branch_run(rule)
    events = [r.event for r in records]
    [done] = of(events, RunCompleted)
    assert (done.answer, done.score) == (answer, 1.0)
    assert (await verify_run(records)).ok


async def test_reference_rule_prefers_config_order_over_recency() -> None:
    """Both approved, neither right: the reference takes the first branch, best_vote the latest."""
    ungraded = {"rounds": 1, "verifiers": 1, "branch_max_workers": 1}
    for rule, expected in (("reference", "41"), ("best_vote", "42")):
        records = await run_evolve_records(
            BranchModel(standard_reply()), answer="99", branches=[{"branch_id": "bad"}, {"branch_id": "good"}],
            evolve={**ungraded, "final_answer": rule},
        )
        [done] = of([r.event for r in records], RunCompleted)
        assert done.answer == expected, rule


async def test_per_branch_results_reach_the_metrics_and_the_timeline() -> None:
    """`apollo run --workflow evolve` and `apollo show` both list each branch's result and mark the chosen one."""
    events = [r.event for r in await branch_run("reference")]
    metrics = evolve_metrics({"r-evo": events})
    rows = {row["branch"]: row for row in metrics["branches"]}
    assert (rows["bad"]["answer"], rows["bad"]["correct"], rows["bad"]["chosen"]) == ("41", 0.0, False)
    assert (rows["good"]["answer"], rows["good"]["correct"], rows["good"]["chosen"]) == ("42", 1.0, True)
    assert metrics["final_by_branch"]["good"] == {"final_success": 1.0, "runs": 1, "chosen": 1}
    text = render(metrics)
    assert "branch bad: its final answer right in 0.0% of 1 runs, chosen as the run's answer 0 times" in text
    lines = branch_summary(events)
    assert any(line.startswith("branch good: answer '42'") and line.endswith("<- final answer") for line in lines)
    assert not any(line.startswith("branch bad") and "final answer" in line for line in lines)


async def test_a_single_model_run_prints_no_branch_lines() -> None:
    """Without branches the timeline gets no per-branch summary."""
    records = await run_evolve_records(RoleModel(standard_reply()), evolve={"rounds": 1, "verifiers": 1})
    assert branch_summary([r.event for r in records]) == []
