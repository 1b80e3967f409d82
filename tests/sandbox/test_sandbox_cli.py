"""The ``sandbox`` CLI command and the doctor's protection report."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from engine.cli.sandbox import register
from engine.sandbox.protections import protection_report


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="apollo")
    register(parser.add_subparsers(dest="command"))
    return parser.parse_args(list(argv))


def test_run_code_prints_the_tool_json(capsys: pytest.CaptureFixture[str]) -> None:
    """`sandbox run -c CODE` prints the reference JSON and exits 0 on success."""
    args = parse("sandbox", "run", "-c", "print(2 + 2)")
    assert args.handler(args) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload == {"result": "4\n", "stderr": "", "status": "success", "returncode": 0}


def test_run_file_failure_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`sandbox run FILE` with failing code prints the failure JSON and exits 1."""
    script = tmp_path / "bad.py"
    script.write_text("x = 1\nraise RuntimeError('nope')\n")
    args = parse("sandbox", "run", str(script), "--timeout", "5")
    assert args.handler(args) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["status"] == "failed"
    assert "line 2" in payload["stderr"]


def test_missing_file_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An unreadable file is a failure with a message, not a traceback."""
    args = parse("sandbox", "run", str(tmp_path / "absent.py"))
    assert args.handler(args) == 1
    assert "cannot read" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ("sandbox", "run"),
        ("sandbox", "run", "f.py", "-c", "print(1)"),
        ("sandbox", "run", "-c", "1", "--timeout", "-2"),
    ],
)
def test_usage_errors_exit_2(argv: tuple[str, ...]) -> None:
    """Neither or both of FILE/-c, or a bad timeout, is a usage error (exit 2)."""
    args = parse(*argv)
    with pytest.raises(SystemExit) as exit_info:
        args.handler(args)
    assert exit_info.value.code == 2


def test_sandbox_needs_a_subcommand() -> None:
    """`sandbox` alone is a usage error."""
    with pytest.raises(SystemExit) as exit_info:
        parse("sandbox")
    assert exit_info.value.code == 2


def test_protection_report_lists_every_protection() -> None:
    """The doctor report names each protection with a yes/no and a detail."""
    rows = protection_report()
    names = [name for name, _, _ in rows]
    assert "network_namespace" in names and "landlock" in names
    assert all(isinstance(ok, bool) and detail for _, ok, detail in rows)
    assert dict((n, ok) for n, ok, _ in rows)["pid_namespace"] is True
