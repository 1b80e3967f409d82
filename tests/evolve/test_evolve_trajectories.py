"""Evolve rounds seal their policy and verifier episodes as training trajectories."""

from __future__ import annotations

from events import RoundCompleted, TrajectorySealed
from replay.verify import verify_run
from tests.evolve.support import RoleModel, of, run_evolve, run_evolve_records, standard_reply


def _by_round(events: list) -> dict[int, list[TrajectorySealed]]:
    out: dict[int, list[TrajectorySealed]] = {}
    for t in of(events, TrajectorySealed):
        out.setdefault(t.round, []).append(t)
    return out


async def test_each_round_seals_its_policy_and_every_verifier() -> None:
    """One policy and one trajectory per verifier each round, grouped per round, with both rewards."""
    model = RoleModel(standard_reply(answers=["41", "42"], verdicts=["0"] * 3 + ["1"] * 3))
    events = await run_evolve(model, evolve={"rounds": 2, "verifiers": 3})
    rounds = _by_round(events)
    assert sorted(rounds) == [0, 1]
    for round_, (policy, *verifiers) in rounds.items():
        assert (policy.role, policy.group_id, policy.episode) == ("policy", f"r-evo/r{round_}", f"r{round_}.policy")
        assert policy.graded and policy.turns and "boxed" in policy.turns[0].response
        assert [v.role for v in verifiers] == ["verifier"] * 3
        assert {v.group_id for v in verifiers} == {f"r-evo/r{round_}/verifiers"}
        assert [(v.sample_index, v.verifier, v.group_size) for v in verifiers] == [(i, i, 3) for i in range(3)]
        assert all("<report>" in v.turns[-1].response for v in verifiers)
    wrong, right = rounds[0][0], rounds[1][0]
    assert (wrong.score, wrong.reward, wrong.vote) == (0.0, 0.0, 0.0)
    assert (right.score, right.reward, right.vote) == (1.0, 1.0, 1.0)
    # Round 0's verifiers rejected a wrong answer: right by the labels and by the vote.
    assert [(v.score, v.vote) for v in rounds[0][1:]] == [(1.0, 1.0)] * 3
    assert len({t.event_id for t in of(events, TrajectorySealed)}) == 8


async def test_sealed_before_the_round_completes() -> None:
    """A round's trajectories are in the log before its RoundCompleted (a trainer may follow the run)."""
    events = await run_evolve(RoleModel(standard_reply()), evolve={"rounds": 1, "verifiers": 2})
    kinds = [type(e) for e in events]
    assert kinds.index(RoundCompleted) > max(i for i, k in enumerate(kinds) if k is TrajectorySealed)


async def test_a_dissenting_verifier_loses_the_vote_but_may_be_right() -> None:
    """The vote rewards siding with the majority; the ground truth rewards judging correctly."""
    model = RoleModel(standard_reply(answers=["41"], verdicts=["1", "0", "1"]))
    events = await run_evolve(model, evolve={"rounds": 1, "verifiers": 3, "aggregate": False})
    policy, *verifiers = of(events, TrajectorySealed)
    assert (policy.score, policy.vote) == (0.0, 2 / 3)
    # Which verifier dissents depends on call order; the dissenter judged right and lost the vote.
    assert sorted((v.score, v.vote) for v in verifiers) == [(0.0, 1.0), (0.0, 1.0), (1.0, 0.0)]


async def test_without_a_ground_truth_only_the_vote_rewards() -> None:
    """An unlabelled problem seals ungraded trajectories that still carry the vote."""
    model = RoleModel(standard_reply(answers=["42"], verdicts=["1"]))
    events = await run_evolve(model, answer=None, evolve={"rounds": 1, "verifiers": 2})
    trajectories = of(events, TrajectorySealed)
    assert [(t.role, t.graded, t.vote) for t in trajectories] == [
        ("policy", False, 1.0),
        ("verifier", False, 1.0),
        ("verifier", False, 1.0),
    ]
    assert all(t.reward == 0.0 for t in trajectories)


async def test_without_verification_the_policy_is_sealed_with_no_vote() -> None:
    """With enable_verify off each round seals its policy trajectory alone, vote None."""
    events = await run_evolve(RoleModel(standard_reply()), evolve={"rounds": 2, "enable_verify": False})
    assert [(t.role, t.round, t.vote, t.score) for t in of(events, TrajectorySealed)] == [
        ("policy", 0, None, 1.0),
        ("policy", 1, None, 1.0),
    ]


async def test_a_failed_verifier_is_sealed_incomplete() -> None:
    """A verifier whose model failed is sealed with its reason and marked incomplete."""

    def reply(role: str, prompt: str, number: int) -> str:
        if role == "verifier" and number == 1:
            return "!fail"
        return standard_reply()(role, prompt, number)

    events = await run_evolve(RoleModel(reply), evolve={"rounds": 1, "verifiers": 2})
    verifiers = [t for t in of(events, TrajectorySealed) if t.role == "verifier"]
    assert sorted((t.complete, t.done_reason) for t in verifiers) == [
        (False, "model_failed"),
        (True, "report"),
    ]


async def test_a_round_whose_policy_failed_is_still_sealed() -> None:
    """A failed policy call seals an incomplete policy trajectory; its verifiers are sealed as usual."""

    def reply(role: str, prompt: str, number: int) -> str:
        return "!fail" if role == "policy" else standard_reply()(role, prompt, number)

    events = await run_evolve(RoleModel(reply), evolve={"rounds": 1, "verifiers": 2})
    assert [(t.role, t.complete, t.done_reason) for t in of(events, TrajectorySealed)] == [
        ("policy", False, "model_failed"),
        ("verifier", True, "report"),
        ("verifier", True, "report"),
    ]


async def test_replay_verification_passes_with_sealed_rounds() -> None:
    """Sealing is part of the decider path: replay re-derives every trajectory with the same id."""
    model = RoleModel(standard_reply(answers=["41", "42"], verdicts=["0", "1"]))
    records = await run_evolve_records(model, evolve={"rounds": 2, "verifiers": 2})
    assert len(of([r.event for r in records], TrajectorySealed)) == 6
    assert (await verify_run(records)).ok


async def test_branches_seal_into_their_own_groups() -> None:
    """Each branch's rounds form their own policy and verifier groups."""
    branches = [{"branch_id": "a"}, {"branch_id": "b"}]
    records = await run_evolve_records(
        RoleModel(standard_reply()), branches=branches, evolve={"rounds": 1, "verifiers": 1}
    )
    trajectories = of([r.event for r in records], TrajectorySealed)
    assert sorted((t.branch, t.role, t.group_id) for t in trajectories) == [
        ("a", "policy", "r-evo/a/r0"),
        ("a", "verifier", "r-evo/a/r0/verifiers"),
        ("b", "policy", "r-evo/b/r0"),
        ("b", "verifier", "r-evo/b/r0/verifiers"),
    ]
    assert (await verify_run(records)).ok
