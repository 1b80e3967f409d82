"""The rag CLI commands through a parser built the way engine/cli/main.py will build it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from engine.cli.rag import register


def _main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="apollo")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.handler(args)


def test_build_then_query_prints_hits_with_names(tmp_path: Path, capsys) -> None:
    """rag build writes the KB and rag query --json prints named hits."""
    assert _main(["rag", "build", "--libraries", "fractions", "--data-dir", str(tmp_path)]) == 0
    assert "fractions:" in capsys.readouterr().out
    code = _main(
        [
            "rag",
            "query",
            "fractions",
            "limit denominator",
            "--json",
            "--bm25",
            "--top-k",
            "2",
            "--data-dir",
            str(tmp_path),
        ]
    )
    assert code == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["name"] == "fractions.Fraction.limit_denominator"
    assert len(rows) <= 2


def test_query_text_output_names_sources(small_kb_dir: Path, capsys) -> None:
    """Plain output shows each hit's qualified name and signature."""
    assert _main(["rag", "query", "math", "gcd", "--data-dir", str(small_kb_dir)]) == 0
    out = capsys.readouterr().out
    assert "[1] math." in out
    assert "signature:" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["rag"],
        ["rag", "query", "pandas", "merge"],
        ["rag", "query", "math"],
        ["rag", "query", "math", "gcd", "--top-k", "zero"],
        ["rag", "query", "math", "gcd", "--top-k", "0"],
        ["rag", "build", "--libraries", "nope"],
    ],
)
def test_usage_errors_exit_2(argv: list[str]) -> None:
    """Bad arguments are argparse usage errors (exit status 2)."""
    with pytest.raises(SystemExit) as exc:
        _main(argv)
    assert exc.value.code == 2


def test_status_reports_stored_builds(small_kb_dir: Path, capsys) -> None:
    """rag status prints which libraries are built and current."""
    assert _main(["rag", "status", "--data-dir", str(small_kb_dir)]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["libraries"]["math"]["built"]
    assert status["libraries"]["sympy"]["built"] is None
