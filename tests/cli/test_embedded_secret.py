"""The embedded server's secret as a user meets it: one that others could read is refused."""

from __future__ import annotations

from pathlib import Path

from engine.nats.server import SECRET_FILE
from tests.cli.support import apollo


def test_a_world_readable_embedded_secret_ends_a_command_with_one_line(tmp_path: Path):
    """`apollo runs` over a data dir whose secret others can read stops with one line naming it, starting no server."""
    data = tmp_path / "data"
    data.mkdir()
    secret = data / SECRET_FILE
    secret.write_text("copied-in-token\n")
    secret.chmod(0o644)
    code, out, err = apollo(data, "runs")
    assert code != 0
    assert out == ""
    assert err.strip().splitlines() == [
        f"apollo: error: the embedded server's secret {secret} is readable by other users (mode 0644); "
        "delete it while no apollo command runs and the next one makes a new secret",
    ]
    assert not (data / "nats").exists()  # refused before any server started
