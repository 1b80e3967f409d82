"""Commands over a data dir with no run say that none is recorded (not that filters matched nothing, not silence)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.support import apollo

pytestmark = [pytest.mark.nats]


def test_regrade_of_an_empty_log_says_no_runs_are_recorded(tmp_path: Path) -> None:
    """No filter given and no run recorded: 'no runs recorded yet', as `apollo runs` says."""
    code, _, err = apollo(tmp_path / "data", "regrade")
    assert code == 0, err[-2000:]
    assert "apollo regrade: no runs recorded yet" in err
    assert "filters" not in err


def test_regrade_with_a_filter_that_matches_nothing_names_the_filters(tmp_path: Path) -> None:
    """A filter given: 'no runs match these filters'."""
    code, _, err = apollo(tmp_path / "data", "regrade", "--model", "nobody")
    assert code == 0, err[-2000:]
    assert "apollo regrade: no runs match these filters" in err


def test_replay_all_of_an_empty_log_says_there_is_nothing_to_replay(tmp_path: Path) -> None:
    """`replay --all --verify` with no run: one line saying none is recorded (it printed nothing at all)."""
    code, out, err = apollo(tmp_path / "data", "replay", "--all", "--verify")
    assert (code, out) == (0, ""), err[-2000:]
    assert "apollo replay: no runs recorded yet: nothing to replay" in err
