"""The evolve workflow through the real routing table, with in-process fake models."""

from __future__ import annotations

import pytest

from events import (
    MemoryWritten,
    ModelCallRequested,
    RoundCompleted,
    RoundStarted,
    RunCompleted,
    VerdictReached,
    VerifierReported,
)
from handlers.evolve.verdict import majority
from tests.evolve.support import RoleModel, of, run_evolve, standard_reply


async def test_improving_rounds_write_memory_and_show_it_as_readable_text() -> None:
    """A wrong round then right rounds: memory grows, later prompts show it, the best answer wins."""
    model = RoleModel(standard_reply(answers=["41", "42"], verdicts=["0"] * 3 + ["1"] * 6))
    events = await run_evolve(model, evolve={"rounds": 3, "verifiers": 3})
    rounds = of(events, RoundCompleted)
    assert [(r.round, r.answer, r.correct, r.majority) for r in rounds] == [
        (0, "41", 0.0, 0),
        (1, "42", 1.0, 1),
        (2, "42", 1.0, 1),
    ]
    assert len(of(events, MemoryWritten)) == 3
    started = of(events, RoundStarted)
    assert started[0].previous_solutions == "" and "Attempt 1:" in started[1].previous_solutions
    policy_prompts = [c.prompt for c in model.calls if c.role == "policy"]
    assert "Attempt 1:" in policy_prompts[1] and "['" not in policy_prompts[1]
    assert "\\boxed{0}" in policy_prompts[1]  # the verdict of the earlier attempt is shown
    [done] = of(events, RunCompleted)
    assert (done.answer, done.score, done.done_reason) == ("42", 1.0, "evolved")


async def test_ground_truth_reaches_no_prompt_and_no_memory() -> None:
    """The loop is label-free: the ground truth only feeds the recorded metrics."""
    model = RoleModel(standard_reply(answers=["7"]))
    events = await run_evolve(model, answer="987654321", evolve={"rounds": 2, "verifiers": 1})
    assert all("987654321" not in call.prompt for call in model.calls)
    assert all("987654321" not in str(m.entry) for m in of(events, MemoryWritten))
    assert [m.entry.score for m in of(events, MemoryWritten)] == [
        1.0,
        1.0,
    ]  # the vote, not the grade
    assert [r.correct for r in of(events, RoundCompleted)] == [0.0, 0.0]


async def test_summarizer_sees_the_whole_trajectory() -> None:
    """The brief is written from every step, not only the last one."""

    def reply(role: str, prompt: str, number: int) -> str:
        if role == "policy":
            return (
                "<python_code>print(6*7)</python_code>"
                if "RESULT=" not in prompt
                else "<answer>\\boxed{42}</answer>"
            )
        if role == "verifier":
            return "<report>fine \\boxed{1}</report>"
        return "**Strategy:** s"

    model = RoleModel(reply)
    await run_evolve(model, evolve={"rounds": 1, "verifiers": 1})
    [summary] = [c.prompt for c in model.calls if c.role == "summarizer"]
    assert "print(6*7)" in summary and "RESULT=42" in summary and "\\boxed{42}" in summary


async def test_verifiers_are_requested_together() -> None:
    """All N verifier calls of a round are emitted by one decision, so they run concurrently."""
    events = await run_evolve(RoleModel(standard_reply()), evolve={"rounds": 1, "verifiers": 5})
    first_steps = [e for e in events if isinstance(e, ModelCallRequested) and e.role == "verifier"]
    assert len(first_steps) == 5 and len({e.causation_id for e in first_steps}) == 1


@pytest.mark.parametrize(("tie", "expected"), [("reject", 0), ("accept", 1), ("first", 1)])
async def test_tie_rule_decides_an_even_split(tie: str, expected: int) -> None:
    """Two approvals against two rejections follow the configured tie rule."""
    model = RoleModel(standard_reply(verdicts=["1", "0"]))
    events = await run_evolve(model, evolve={"rounds": 1, "verifiers": 4, "tie": tie})
    [verdict] = of(events, VerdictReached)
    assert (verdict.tie, verdict.majority, verdict.approvals) == (True, expected, 2)


def test_majority_without_a_tie_ignores_the_rule() -> None:
    """A clear majority wins whatever the tie rule."""
    assert majority([1, 0, 1], "reject") == (1, False)
    assert majority([0, 0, 1], "accept") == (0, False)
    with pytest.raises(ValueError, match="tie rule"):
        majority([1, 0], "coin")


async def test_disagreeing_verifiers_are_all_recorded() -> None:
    """Every verifier's report and judgment is recorded before the vote."""
    model = RoleModel(standard_reply(verdicts=["1", "0", "1"]))
    events = await run_evolve(model, evolve={"rounds": 1, "verifiers": 3})
    reports = sorted(of(events, VerifierReported), key=lambda r: r.verifier)
    assert sorted(r.judgment for r in reports) == [0, 1, 1]
    [verdict] = of(events, VerdictReached)
    assert (verdict.majority, verdict.tie) == (1, False)


async def test_malformed_reports_are_retried_then_count_as_rejections() -> None:
    """A verifier without a boxed 0/1 report gets five recorded retries, then votes 0."""

    def reply(role: str, prompt: str, number: int) -> str:
        if role == "verifier":
            return "<report>looks plausible</report>"
        return standard_reply()(role, prompt, number)

    events = await run_evolve(RoleModel(reply), evolve={"rounds": 1, "verifiers": 1})
    retries = [
        e for e in events if isinstance(e, ModelCallRequested) and e.purpose == "format_retry"
    ]
    assert len(retries) == 5
    [report] = of(events, VerifierReported)
    assert (report.judgment, report.valid, report.retries, report.reason) == (
        0,
        False,
        5,
        "no_valid_report",
    )


async def test_a_retry_can_recover_a_report() -> None:
    """A verifier that answers properly on its second retry keeps its judgment."""

    def reply(role: str, prompt: str, number: int) -> str:
        if role == "verifier":
            return "no tags at all" if number < 6 else "<report>ok \\boxed{1}</report>"
        return standard_reply()(role, prompt, number)

    events = await run_evolve(
        RoleModel(reply), evolve={"rounds": 1, "verifiers": 1, "verifier_episode": {"max_steps": 4}}
    )
    [report] = of(events, VerifierReported)
    assert (report.judgment, report.valid, report.retries) == (1, True, 3)


async def test_failing_models_end_rounds_with_recorded_reasons() -> None:
    """Policy and verifier failures become data; the run still completes every round."""

    def reply(role: str, prompt: str, number: int) -> str:
        return "!fail" if role in ("policy", "verifier") else "summary"

    events = await run_evolve(RoleModel(reply), evolve={"rounds": 2, "verifiers": 2})
    assert [r.done_reason for r in of(events, RoundCompleted)] == ["model_failed", "model_failed"]
    assert {r.reason for r in of(events, VerifierReported)} == {"model_failed"}
    assert len(of(events, RunCompleted)) == 1


async def test_three_branches_run_concurrently_and_share_memory() -> None:
    """With 100 ms per call, the branches' model calls overlap in time and all write memory."""
    model = RoleModel(standard_reply(), latency=0.1)
    branches = [{"branch_id": f"b{i}", "policy": {"model": f"p{i}"}} for i in range(3)]
    events = await run_evolve(model, branches=branches, evolve={"rounds": 1, "verifiers": 2})
    firsts = [c for c in model.calls if c.role == "policy"]
    assert {c.branch for c in firsts} == {"b0", "b1", "b2"}
    latest_start = max(c.started for c in firsts)
    assert all(c.ended > latest_start for c in firsts)  # every policy call overlaps the others
    assert {m.entry.branch for m in of(events, MemoryWritten)} == {"b0", "b1", "b2"}
    assert len(of(events, RunCompleted)) == 1


async def test_branch_cap_starts_waiting_branches_one_after_another() -> None:
    """branch_max_workers=1 runs branches strictly one after the other, each exactly once."""
    model = RoleModel(standard_reply(), latency=0.01)
    branches = [{"branch_id": f"b{i}"} for i in range(3)]
    events = await run_evolve(
        model, branches=branches, evolve={"rounds": 2, "verifiers": 1, "branch_max_workers": 1}
    )
    starts = [(s.branch, s.round) for s in of(events, RoundStarted)]
    assert starts == [("b0", 0), ("b0", 1), ("b1", 0), ("b1", 1), ("b2", 0), ("b2", 1)]
    later_rounds = [s for s in of(events, RoundStarted) if s.branch == "b2"]
    assert "Attempt 1:" in later_rounds[0].previous_solutions  # memory is shared across branches


async def test_branch_calls_carry_the_branch_and_its_models() -> None:
    """Each branch's model calls name its own models; a branch without a verifier uses the default."""
    model = RoleModel(standard_reply())
    branches = [
        {"branch_id": "a", "policy": {"model": "pa"}, "verifier": {"model": "va"}},
        {"branch_id": "b", "policy": {"model": "pb"}},
    ]
    events = await run_evolve(
        model,
        branches=branches,
        evolve={"rounds": 1, "verifiers": 1, "default_verifier": {"model": "vd"}},
    )
    calls = {(e.branch, e.role): e.model for e in events if isinstance(e, ModelCallRequested)}
    assert calls[("a", "policy")] == "pa" and calls[("a", "verifier")] == "va"
    assert calls[("b", "policy")] == "pb" and calls[("b", "verifier")] == "vd"


async def test_rounds_without_verification_still_write_memory() -> None:
    """With enable_verify off, each round writes an unscored memory entry and no verifier runs."""
    model = RoleModel(standard_reply())
    events = await run_evolve(model, evolve={"rounds": 2, "enable_verify": False})
    assert [m.entry.score for m in of(events, MemoryWritten)] == [None, None]
    assert {c.role for c in model.calls} == {"policy"}
    assert len(of(events, RunCompleted)) == 1


def test_memory_projection_is_registered() -> None:
    """The projection registry offers the memory fold for live projection and rebuild."""
    from handlers.projections.registry import projections

    assert "memory" in projections()
