"""`apollo train --demo --server trainer`: the endpoint inside the trainer serves the rollouts and takes each step."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli.main import main

pytestmark = pytest.mark.timeout(600)


@pytest.mark.slow
def test_one_step_served_by_the_trainers_endpoint_is_activated_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """One step with --server trainer: the adapters are copied into the trainer's endpoint (policy.activated,
    in_process)."""
    pytest.importorskip("verl")
    out = tmp_path / "demo"
    assert main(["train", "--demo", "--server", "trainer", "--steps", "1", "--out", str(out),
                 "--groups", "1", "--group-size", "2", "--max-tokens", "4"]) == 0
    monkeypatch.setenv("APOLLO_DATA_DIR", str(out / "engine"))
    capsys.readouterr()
    assert main(["show", "policy-default", "--json"]) == 0
    events = [json.loads(line)["event"] for line in capsys.readouterr().out.splitlines()]
    assert [(e["version"], e["method"]) for e in events if e["type"] == "policy.activated"] == [(1, "in_process")]
    assert not (out / "checkpoints" / "step-0001" / "adapter.gguf").exists()
