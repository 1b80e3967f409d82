"""The house rules run with the tests: ruff, the import contracts, and a type check with no new errors.

The type check compares mypy's findings with `tests/type_baseline.txt` (what was there when the
check was introduced), without line numbers so an unrelated edit does not move them. A new
finding fails; a fixed one fails too until the baseline is rewritten, so the count only falls:

    .venv/bin/python tests/test_house_rules.py --write-baseline
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
BASELINE = ROOT / "tests" / "type_baseline.txt"
_FINDING = re.compile(r"^(?P<path>[\w./-]+\.py):\d+: error: (?P<message>.*)$")

pytestmark = pytest.mark.timeout(600)


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)


def type_findings() -> collections.Counter[str]:
    """mypy's errors over the packages named in pyproject.toml, as 'path: message [code]' lines."""
    # No incremental cache: one left by another set of installed packages can crash mypy.
    done = _run(sys.executable, "-m", "mypy", "--no-error-summary", "--no-pretty", "--show-error-codes",
                "--cache-dir", os.devnull)
    if done.returncode not in (0, 1):
        raise AssertionError(f"mypy did not run: {done.stderr or done.stdout}")
    found = collections.Counter()
    for line in done.stdout.splitlines():
        match = _FINDING.match(line)
        if match:
            found[f"{match['path']}: {match['message']}"] += 1
    return found


def baseline() -> collections.Counter[str]:
    lines = BASELINE.read_text(encoding="utf-8").splitlines() if BASELINE.exists() else []
    return collections.Counter(line for line in lines if line and not line.startswith("#"))


def test_ruff_finds_nothing() -> None:
    """`ruff check` passes over the whole repository (the rules in pyproject.toml, stale noqa included)."""
    done = _run(str(BIN / "ruff"), "check", "--output-format", "concise", ".")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_the_import_contracts_hold() -> None:
    """`lint-imports` keeps engine -> replay -> handlers -> events one way, and engine's own layers."""
    done = _run(str(BIN / "lint-imports"))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_the_type_checker_finds_nothing_new() -> None:
    """mypy reports no error outside the baseline, and every baseline error still exists."""
    found, known = type_findings(), baseline()
    new = sorted((found - known).elements())
    fixed = sorted((known - found).elements())
    assert new == [], "new type errors (fix them; the baseline only shrinks):\n" + "\n".join(new)
    assert fixed == [], ("fixed type errors: remove them from tests/type_baseline.txt "
                         "(python tests/test_house_rules.py --write-baseline):\n" + "\n".join(fixed))


def _write_baseline() -> None:
    found = type_findings()
    header = "# mypy errors allowed to remain (tests/test_house_rules.py); this list only shrinks\n"
    BASELINE.write_text(header + "".join(f"{line}\n" for line in sorted(found.elements())), encoding="utf-8")
    print(f"wrote {sum(found.values())} findings to {BASELINE.relative_to(ROOT)}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write-baseline"]:
        _write_baseline()
    else:
        sys.exit("usage: python tests/test_house_rules.py --write-baseline")
