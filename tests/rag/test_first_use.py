"""`apollo rag query` on first use: the index is built under APOLLO_DATA_DIR, saying so."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.cli.main import main


@pytest.fixture
def isolated(monkeypatch, tmp_path: Path) -> tuple[Path, Path]:
    """A data dir and a home that must stay untouched."""
    data, home = tmp_path / "data", tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("APOLLO_DATA_DIR", str(data))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    return data, home


def test_a_first_query_builds_under_the_data_dir_and_says_so(isolated, capsys) -> None:
    """The build is announced with its stages on stderr; nothing is written under $HOME."""
    data, home = isolated
    assert main(["rag", "query", "fractions", "limit denominator", "--bm25"]) == 0
    captured = capsys.readouterr()
    assert "Fraction.limit_denominator" in captured.out
    assert f"apollo rag: building the fractions index in {data / 'rag'}" in captured.err
    assert "fractions: reading the installed documentation" in captured.err
    assert (data / "rag" / "fractions").is_dir()
    assert not any(home.rglob("*"))


def test_a_second_query_uses_the_stored_index_silently(isolated, capsys) -> None:
    """Once built, a query prints no build lines."""
    assert main(["rag", "query", "fractions", "limit denominator", "--bm25"]) == 0
    capsys.readouterr()
    assert main(["rag", "query", "fractions", "limit denominator", "--bm25"]) == 0
    assert "building" not in capsys.readouterr().err


def test_an_explicit_data_dir_wins_over_the_environment(isolated, tmp_path, capsys) -> None:
    """``--data-dir`` is used as given."""
    data, _ = isolated
    chosen = tmp_path / "kb"
    assert main(["rag", "query", "fractions", "limit denominator", "--bm25", "--data-dir", str(chosen)]) == 0
    assert (chosen / "fractions").is_dir()
    assert not (data / "rag").exists()
