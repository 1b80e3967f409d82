"""The episode benchmark's estimate of the cores its target would take (pure arithmetic)."""

from __future__ import annotations

import pytest

from bench.episode import CoresNeeded, Measured, cores_needed, describe_need


def row(rate: float, cpu_ms: float, busy_cores: float) -> Measured:
    return Measured(rate=rate, cpu_ms=cpu_ms, busy_cores=busy_cores)


def test_cpu_per_episode_is_scaled_to_the_target_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CPU measured per episode is scaled to the cores needed at the target rate."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    # 100 ep/s at 5 ms each, the machine 0.8 cores busy (8 ms per episode in all).
    need = cores_needed([row(100, 5.0, 0.8)], rate=200, processes=1)
    assert need == CoresNeeded(per_process=pytest.approx(1.0), machine=pytest.approx(1.6), available=2)
    assert need.reachable


def test_medians_of_the_rounds_are_used_and_workers_share_the_engine_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Core needs use the median round, ignoring a wild one, and worker processes share the engine's CPU."""
    monkeypatch.setattr("os.cpu_count", lambda: 4)
    rounds = [row(100, 4.0, 1.0), row(50, 100.0, 3.0), row(100, 4.0, 1.0)]  # one wild round
    need = cores_needed(rounds, rate=300, processes=2)
    assert need.per_process == pytest.approx(0.6)
    assert need.machine == pytest.approx(3.0)


@pytest.mark.parametrize(
    ("per_process", "machine", "reachable"), [(1.01, 1.0, False), (0.5, 2.5, False), (1.0, 2.0, True)]
)
def test_out_of_reach_when_one_process_or_the_machine_would_need_more_than_it_has(
    per_process: float, machine: float, reachable: bool
) -> None:
    """A rate is out of reach when one process or the whole machine would need more cores than it has."""
    need = CoresNeeded(per_process, machine, available=2)
    assert need.reachable is reachable
    line = describe_need(need, rate=238.4)
    assert "238 ep/s" in line
    assert ("within reach here" if reachable else "out of reach on this machine") in line
