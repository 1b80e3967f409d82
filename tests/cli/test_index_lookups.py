"""`apollo replay`, `fork`, `diff` and `cancel` find runs through the index of runs (issue 33).

A run id or an unambiguous prefix of one is looked up in the index, as `show` and `runs`
do, so a lookup costs what it matches, not the number of runs in the log; `replay --all`
takes its runs from the index and reads only their histories. Every test here runs with
the event log's listing of every run id (``run_ids``) made to fail: a command that still
asked for it would fail its test.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from engine.app.bootstrap import open_runtime
from engine.cli.main import main
from engine.config.settings import load_settings
from engine.nats.jetstream import JetStreamEventLog
from engine.testing.event_builders import submitted
from tests.cli.support import copy_of

pytestmark = [pytest.mark.nats, pytest.mark.timeout(120)]

LISTS_EVERY_RUN = JetStreamEventLog.run_ids
"""The real listing, for the tests' own checks (the commands find it failing)."""
AMBIGUOUS = ("apollo: error: run id prefix 'solve-ab' is ambiguous: 2 runs match (solve-abc1, solve-abd2); "
             "give more of the id")


@pytest.fixture
def data(two_runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the two finished runs' data dir, as APOLLO_DATA_DIR, its log unable to list every run."""
    copy = copy_of(two_runs, tmp_path)
    monkeypatch.setenv("APOLLO_DATA_DIR", str(copy))
    monkeypatch.delenv("APOLLO_NATS_URL", raising=False)

    async def lists_every_run(self: JetStreamEventLog) -> list[str]:
        raise AssertionError("the command listed every run id of the log")

    monkeypatch.setattr(JetStreamEventLog, "run_ids", lists_every_run)
    return copy


def _apollo(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``apollo ARGS`` in this process: (exit code, stdout, stderr)."""
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _submit(*run_ids: str) -> list[str]:
    """Record a bare submission (a run that has not ended) for each id; every run id the log
    lists afterwards, in its own order."""

    async def go() -> list[str]:
        runtime = await open_runtime(load_settings(), start_server=True, quiet=True)
        try:
            for run_id in run_ids:
                await runtime.log.append(submitted(run_id))
            return await LISTS_EVERY_RUN(runtime.log)
        finally:
            await runtime.close()

    return asyncio.run(go())


def test_replay_takes_a_prefix(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`replay solve-abd` rebuilds solve-abd2, and `--verify` re-decides it."""
    code, out, err = _apollo(capsys, "replay", "solve-abd", "--json")
    assert code == 0, err[-2000:]
    assert [json.loads(line)["run_id"] for line in out.splitlines()] == ["solve-abd2"]
    code, out, err = _apollo(capsys, "replay", "solve-abc", "--verify")
    assert code == 0, err[-2000:]
    assert out.startswith("solve-abc1: deterministic")


def test_fork_takes_a_prefix(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`fork solve-abd` forks solve-abd2."""
    code, out, err = _apollo(capsys, "fork", "solve-abd", "--at", "3", "--no-wait", "--no-probe",
                             "--run-id", "fork-of-abd")
    assert code == 0, err[-2000:]
    assert out.strip() == "fork-of-abd"
    assert "fork-of-abd continues solve-abd2 after its event 3" in err


def test_diff_takes_prefixes(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`diff solve-abc solve-abd` compares solve-abc1 with solve-abd2."""
    code, out, err = _apollo(capsys, "diff", "solve-abc", "solve-abd", "--json")
    assert code == 0, err[-2000:]
    diff = json.loads(out)
    assert (diff["run_a"], diff["run_b"]) == ("solve-abc1", "solve-abd2")


def test_cancel_takes_a_prefix(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`cancel solve-xy` cancels the unfinished solve-xyz1; `cancel solve-abd` names the run it found ended."""
    _submit("solve-xyz1")
    code, _, err = _apollo(capsys, "cancel", "solve-xy", "--reason", "stopped by hand")
    assert code == 0, err[-2000:]
    assert "apollo cancel: solve-xyz1 cancelled: stopped by hand" in err
    code, _, err = _apollo(capsys, "cancel", "solve-abd")
    assert code == 1
    assert err.strip().splitlines()[-1] == "apollo: error: run solve-abd2 has already completed: nothing to cancel"


@pytest.mark.parametrize("args", [
    ["replay", "solve-ab"], ["replay", "solve-ab", "--verify"], ["fork", "solve-ab", "--at", "2", "--no-probe"],
    ["diff", "solve-ab", "solve-abc1"], ["diff", "solve-abc1", "solve-ab"], ["cancel", "solve-ab"],
])
def test_an_ambiguous_prefix_is_one_line(data: Path, capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    """`solve-ab` matches both runs: one line naming them, nothing on stdout, and nothing cancelled."""
    code, out, err = _apollo(capsys, *args)
    assert code == 1 and out == "", err[-2000:]
    assert err.strip().splitlines()[-1] == AMBIGUOUS
    code, out, err = _apollo(capsys, "runs", "--json")
    assert code == 0, err[-2000:]
    assert {row["run_id"]: row["status"] for row in json.loads(out)} == {
        "solve-abc1": "completed", "solve-abd2": "completed"}


def test_no_match_reads_the_text_as_given(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A name no run starts with is read as given: the read says nothing is recorded under it."""
    for args in (["replay", "solve-zz"], ["diff", "solve-abc1", "solve-zz"], ["cancel", "solve-zz"],
                 ["fork", "solve-zz", "--at", "1", "--no-probe"]):
        code, out, err = _apollo(capsys, *args)
        assert code == 1 and out == "", err[-2000:]
        assert "unknown run 'solve-zz': no events recorded" in err, args


def test_an_exact_id_wins_over_longer_ids_it_prefixes(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`solve-abc1` names that run even when solve-abc1-b starts with it too."""
    _submit("solve-abc1-b")
    code, out, err = _apollo(capsys, "replay", "solve-abc1", "--json")
    assert code == 0, err[-2000:]
    assert [json.loads(line)["run_id"] for line in out.splitlines()] == ["solve-abc1"]


def test_replay_all_reads_the_runs_the_index_lists_not_the_whole_log(
    data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the index caught up, `replay --all` reads each run's history and never the log end to end;
    it replays every run once, in the order the log lists them (``solve-abc1-b`` before ``solve-abc1``)."""
    order = _submit("solve-abc1-b", "solve-0")
    assert order == ["solve-0", "solve-abc1-b", "solve-abc1", "solve-abd2"]  # the subjects' order
    assert _apollo(capsys, "runs")[0] == 0  # the index folds what is new

    def reads_the_whole_log(*_: object, **__: object) -> object:
        raise AssertionError("replay --all read the whole log")

    monkeypatch.setattr(JetStreamEventLog, "read_all", reads_the_whole_log)
    code, out, err = _apollo(capsys, "replay", "--all", "--json")
    assert code == 0, err[-2000:]
    assert [json.loads(line)["run_id"] for line in out.splitlines()] == order
    code, out, err = _apollo(capsys, "replay", "--all", "--verify")
    assert code == 0, err[-2000:]
    assert out.splitlines()[-1] == "4/4 runs ok"
    assert [line.split(":")[0] for line in out.splitlines()[:-1]] == order
