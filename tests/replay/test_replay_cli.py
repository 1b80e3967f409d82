"""`apollo replay --file`, garbage history files, and the fork flags."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.cli.replay import fork_overrides
from tests.replay.support import HISTORIES


def test_replay_verify_of_good_history_exits_zero(capsys) -> None:
    """A good golden history verifies from the command line."""
    assert main(["replay", "--file", str(HISTORIES / "good_code_then_answer.ndjson"), "--verify"]) == 0
    assert "deterministic" in capsys.readouterr().out


def test_replay_verify_of_edited_history_exits_one_naming_the_seq(capsys) -> None:
    """An edited history fails with exit 1 and names the differing sequence and field."""
    assert main(["replay", "--file", str(HISTORIES / "edited_action_parsed.ndjson"), "--verify"]) == 1
    out = capsys.readouterr().out
    assert "event 5 (seq 5): action.parsed" in out and "action:" in out


def test_replay_rebuild_of_a_file_reports_each_projection(capsys) -> None:
    """Without --verify the projections are rebuilt and listed."""
    assert main(["replay", "--file", str(HISTORIES / "good_code_then_answer.ndjson"), "--json"]) == 0
    assert '"projection": "episode"' in capsys.readouterr().out


@pytest.mark.parametrize("content", ["", "not json\n", '{"seq": 1}\n', '{"seq": 1, "subject": "x", "event": {}}\n',
                                     '[1, 2]\n'])
def test_garbage_history_file_is_a_clear_error(tmp_path: Path, content: str, capsys) -> None:
    """Unreadable history files end with one error line and exit 1."""
    path = tmp_path / "bad.ndjson"
    path.write_text(content)
    assert main(["replay", "--file", str(path), "--verify"]) == 1
    assert "apollo: error:" in capsys.readouterr().err


def test_missing_history_file_is_a_clear_error(tmp_path: Path, capsys) -> None:
    """A history file that does not exist is named in the error."""
    assert main(["replay", "--file", str(tmp_path / "nope.ndjson")]) == 1
    assert "nope.ndjson" in capsys.readouterr().err


def test_fork_flags_become_policy_overrides(tmp_path: Path) -> None:
    """--model/--model-url and a config file override the parent's settings, without secrets."""
    config = tmp_path / "fork.yaml"
    config.write_text("models:\n  policy:\n    api_key: secret\n    temperature: 0.1\nepisode:\n  max_steps: 2\n")
    args = argparse.Namespace(fork_config=str(config), model=None, model_url="http://h:1/v1")
    overrides = fork_overrides(args, "scripted:demo.json")
    assert overrides["models"]["policy"] == {"temperature": 0.1, "base_url": "http://h:1/v1", "model": "default"}
    assert overrides["episode"] == {"max_steps": 2}


def test_fork_without_at_is_a_usage_error() -> None:
    """`apollo fork RUN` without --at is rejected by the parser."""
    with pytest.raises(SystemExit) as info:
        main(["fork", "r-1"])
    assert info.value.code == 2
