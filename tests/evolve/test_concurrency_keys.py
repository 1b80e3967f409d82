"""``evolve.problem_max_workers`` and the reference's concurrency block (issue 21 §3)."""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.cli.dataset_run import runs_in_flight
from engine.config.settings import load_settings, validate


def args(workflow: str, concurrency: int | None = None) -> argparse.Namespace:
    return argparse.Namespace(workflow=workflow, concurrency=concurrency)


def test_problem_max_workers_sets_evolve_runs_in_flight() -> None:
    """Without --concurrency, an evolve dataset run keeps problem_max_workers runs open."""
    settings = validate({"evolve": {"problem_max_workers": 3}})
    assert runs_in_flight(args("evolve"), settings) == 3


def test_the_flag_wins_and_reason_runs_keep_their_default() -> None:
    """--concurrency overrides the setting; the reason workflow and 0 keep the default of 16."""
    settings = validate({"evolve": {"problem_max_workers": 3}})
    assert runs_in_flight(args("evolve", 5), settings) == 5
    assert runs_in_flight(args("reason"), settings) == 16
    assert runs_in_flight(args("evolve"), validate({})) == 16


def test_concurrency_keys_do_not_enter_the_recorded_settings_that_name_runs() -> None:
    """Runs in flight and samples steer the command, not a run: they are not recorded (nor in the run id digest)."""
    evolve = {"problem_max_workers": 3, "test_times": 2, "verifier_max_workers": 2}
    recorded = validate({"evolve": evolve}).run_settings()
    assert "problem_max_workers" not in recorded["evolve"] and "test_times" not in recorded["evolve"]
    assert recorded["evolve"]["verifier_max_workers"] == 2  # deciders read this one


def test_reference_zero_means_one_at_a_time(tmp_path: Path) -> None:
    """The reference runs problems and verifiers sequentially when its worker count is 0."""
    path = tmp_path / "c.yaml"
    path.write_text("env: {config: {informal_math_evolving: {concurrency: "
                    "{verifier_max_workers: 0, problem_max_workers: 0}}}}\n")
    settings = load_settings(path, environ={})
    assert (settings.evolve.verifier_max_workers, settings.evolve.problem_max_workers) == (1, 1)
    path.write_text("env: {config: {informal_math_evolving: {concurrency: "
                    "{verifier_max_workers: 5, problem_max_workers: 30}}}}\n")
    settings = load_settings(path, environ={})
    assert (settings.evolve.verifier_max_workers, settings.evolve.problem_max_workers) == (5, 30)
