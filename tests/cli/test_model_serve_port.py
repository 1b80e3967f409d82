"""`apollo model serve` on a port another server holds says so in one line, instead of llama.cpp's
"Failed to init server, please check the input params" (issue 34's serving command, issue 31's spirit)."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.cli.support import apollo


def test_model_serve_on_a_port_in_use_names_the_port_and_the_way_out(tmp_path: Path) -> None:
    """A port something listens on: one line naming it and --port, exit 1, before any model is loaded."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, out, err = apollo(tmp_path / "data", "model", "serve", "--port", str(port))
    assert code == 1
    assert out == ""
    assert err.strip().splitlines() == [
        f"apollo: error: port {port} on 127.0.0.1 is in use (another server?): --port N serves on another, "
        "--port 0 on a free one"]
