"""`apollo run --workflow evolve` (K-branch example), then `apollo show`, `replay --verify` and `export`.

Each command runs as a user runs it (``python -m engine`` from the repository root, so the
example's ``scripted:`` model path resolves), with an embedded real nats-server kept in
this test's data dir.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AIME = ROOT.parent / "shared" / "data" / "aime24.jsonl"


async def apollo(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    env = {**os.environ, "APOLLO_DATA_DIR": str(tmp_path / "data")}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "engine", *args, cwd=ROOT, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 120)
    return process.returncode or 0, out.decode(), err.decode()


async def test_branch_results_are_printed_written_shown_and_replay_verified(tmp_path: Path) -> None:
    """Three branches: one line each in the metrics, a branches JSONL with one chosen, the same in show."""
    config = str(ROOT / "examples" / "configs" / "evolve_multi.yaml")
    out_file = tmp_path / "out.jsonl"
    code, out, err = await apollo(tmp_path, "--config", config, "run", "--workflow", "evolve",
                                  "--dataset", str(AIME), "--limit", "1", "--out", str(out_file))
    assert code == 0, err[-2000:]
    assert out.count("its final answer right in") == 3
    branches = [json.loads(line) for line in (tmp_path / "out-branches.jsonl").read_text().splitlines()]
    assert [b["branch"] for b in branches] == ["qwen25_branch_temp_0.7", "qwen3_branch_temp_0.7",
                                               "qwen3_branch_temp_1.0"]
    assert sum(b["chosen"] for b in branches) == 1 and all(b["rounds"] == 2 for b in branches)
    run_id = branches[0]["run_id"]
    code, shown, err = await apollo(tmp_path, "--config", config, "show", run_id)
    assert code == 0, err[-2000:]
    chosen = next(b["branch"] for b in branches if b["chosen"])
    assert f"branch {chosen}: answer" in shown and shown.count("<- final answer") == 1
    assert shown.count("round.completed") == 6
    code, verified, err = await apollo(tmp_path, "--config", config, "replay", run_id, "--verify")
    assert code == 0 and "deterministic" in verified + err, (verified + err)[-2000:]
    exported = tmp_path / "rollouts.jsonl"
    code, summary, err = await apollo(tmp_path, "--config", config, "export", "--format", "jsonl",
                                      "--layout", "multi_turn", "--reward-source", "verifier_vote",
                                      "--run", run_id, "--out", str(exported))
    assert code == 0, err[-2000:]
    rows = [json.loads(line) for line in exported.read_text().splitlines()]
    policy = [r for r in rows if r["role"] == "policy"]
    assert len(policy) == 6 and any(r["role"] == "verifier" for r in rows)  # 3 branches x 2 rounds
    assert all(r["outcome_reward"] == r["vote"] and r["reward_source"] == "verifier_vote" for r in rows)
    assert json.loads(summary.splitlines()[-1])["rows"] == len(rows)
