"""``evolve.verifier_max_workers``: at most that many verifier episodes of a round run at once."""

from __future__ import annotations

from events import ModelCallRequested, VerdictReached, VerifierReported
from replay.verify import verify_run
from tests.evolve.support import RoleModel, of, run_evolve, run_evolve_records, standard_reply


def most_in_flight(events: list) -> int:
    """The largest number of verifier episodes started and not yet reported, in stream order."""
    running: set[str] = set()
    most = 0
    for event in events:
        if isinstance(event, ModelCallRequested) and event.role == "verifier":
            running.add(event.episode)
            most = max(most, len(running))
        elif isinstance(event, VerifierReported):
            running.discard(f"r{event.round}.verifier.{event.verifier}")
    return most


async def test_a_cap_of_two_runs_five_verifiers_two_at_a_time() -> None:
    """Five verifiers under a cap of two: never more than two in flight, all five report, one vote."""
    model = RoleModel(standard_reply(verdicts=["1", "0", "1", "1", "0"]), latency=0.01)
    records = await run_evolve_records(
        model, evolve={"rounds": 2, "verifiers": 5, "verifier_max_workers": 2}
    )
    assert (await verify_run(records)).ok  # replay --verify decides the same starts
    events = [r.event for r in records]
    assert most_in_flight(events) == 2
    reports = of(events, VerifierReported)
    assert sorted((r.round, r.verifier) for r in reports) == [(r, i) for r in (0, 1) for i in range(5)]
    assert [len(v.judgments) for v in of(events, VerdictReached)] == [5, 5]


async def test_a_cap_of_one_runs_verifiers_one_after_another_in_order() -> None:
    """A cap of one (the reference's sequential verifiers) starts verifier i+1 only after i reported."""
    model = RoleModel(standard_reply())
    events = await run_evolve(model, evolve={"rounds": 1, "verifiers": 3, "verifier_max_workers": 1})
    assert most_in_flight(events) == 1
    assert [r.verifier for r in of(events, VerifierReported)] == [0, 1, 2]


async def test_no_cap_starts_every_verifier_together() -> None:
    """The default (0) asks every verifier at once."""
    events = await run_evolve(RoleModel(standard_reply()), evolve={"rounds": 1, "verifiers": 4})
    assert most_in_flight(events) == 4


async def test_a_cap_above_the_verifier_count_changes_nothing() -> None:
    """A cap of 9 with 3 verifiers starts all three together and starts no extra one."""
    events = await run_evolve(
        RoleModel(standard_reply()), evolve={"rounds": 1, "verifiers": 3, "verifier_max_workers": 9}
    )
    assert most_in_flight(events) == 3 and len(of(events, VerifierReported)) == 3
