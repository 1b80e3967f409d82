"""The README's "Everyday commands" table names every command `apollo --help` lists, so a newcomer reading
it finds each one (issue 31: the README's commands table is true; issue 34: the serving command documented)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.cli.support import ROOT, apollo


def test_every_command_apollo_help_lists_has_a_row_in_the_readmes_table(tmp_path: Path) -> None:
    """Each COMMAND of `apollo --help` starts a command cell of the README's table (`apollo NAME ...`)."""
    code, out, err = apollo(tmp_path / "data", "--help")
    assert code == 0, err[-2000:]
    listed = out.split("positional arguments:", 1)[1].split("options:", 1)[0]
    commands = re.findall(r"^    ([a-z][a-z-]*) ", listed, flags=re.MULTILINE)
    assert "solve" in commands and "model" in commands
    readme = (ROOT / "README.md").read_text()
    table = readme.split("## Everyday commands", 1)[1].split("\n\n", 2)[1]
    cells = " ".join(line.split(" | ", 1)[0] for line in table.splitlines() if line.startswith("| `"))
    missing = [name for name in commands if f"`apollo {name}" not in cells and f"/ `apollo {name}" not in cells]
    assert missing == []
