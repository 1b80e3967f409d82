"""The shipped server configuration (deploy/nats/) run for real in a test.

The config files are copied as they ship; only what is outside them changes: the
certificate folder (/etc/nats/tls/ becomes a test CA's folder), the store, and the ports
(loopback, free). Role passwords come from the environment, as in production.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from engine.nats.security import ClientSecurity
from engine.nats.server import find_server_binary, free_port
from engine.testing.tls import TlsFiles, make_tls_files

DEPLOY_NATS = Path(__file__).resolve().parents[2] / "deploy" / "nats"
ROLES = ("submitter", "worker", "trainer", "viewer", "admin")


def role_passwords() -> dict[str, str]:
    """One password per role, as the server's environment variables."""
    return {f"APOLLO_NATS_{role.upper()}_PASSWORD": f"{role}-pw-{os.getpid()}" for role in ROLES}


def shipped_config(name: str, folder: Path, tls: TlsFiles, *, port: int = 4222, http_port: int = 8222) -> Path:
    """A copy of ``deploy/nats/<name>`` (and auth.conf) pointed at ``tls`` and ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for source in DEPLOY_NATS.glob("*.conf"):
        text = source.read_text()
        text = text.replace("/etc/nats/tls/", f"{tls.ca.parent}/").replace("/data/nats", str(folder / "store"))
        text = text.replace("listen: 0.0.0.0:4222", f"listen: 127.0.0.1:{port}")
        text = text.replace("http: 0.0.0.0:8222", f"http: 127.0.0.1:{http_port}")
        (folder / source.name).write_text(text)
    return folder / name


@dataclass
class SecuredServer:
    """A running nats-server with the shipped single-node configuration."""

    url: str
    tls: TlsFiles
    passwords: dict[str, str]
    process: subprocess.Popen[bytes]
    log_file: Path

    def role(self, role: str, **changes: str) -> ClientSecurity:
        """The credentials and CA a process of ``role`` is given."""
        options = {"user": role, "password": self.passwords[f"APOLLO_NATS_{role.upper()}_PASSWORD"],
                   "ca_file": str(self.tls.ca), **changes}
        return ClientSecurity(**options)

    def env(self, role: str) -> dict[str, str]:
        """The ``APOLLO_NATS_*`` variables of an apollo process of ``role``."""
        return {"APOLLO_NATS_URL": self.url, "APOLLO_NATS_USER": role,
                "APOLLO_NATS_PASSWORD": self.passwords[f"APOLLO_NATS_{role.upper()}_PASSWORD"],
                "APOLLO_NATS_CA": str(self.tls.ca)}


@contextmanager
def secured_server(folder: Path) -> Iterator[SecuredServer]:
    """Start deploy/nats/single.conf (roles from auth.conf, TLS) on a free loopback port."""
    tls = make_tls_files(folder / "tls")
    port = free_port()
    config = shipped_config("single.conf", folder / "conf", tls, port=port, http_port=free_port())
    passwords = role_passwords()
    log_file = folder / "nats-server.log"
    process = subprocess.Popen(  # the pinned nats-server
        [str(find_server_binary()), "-c", str(config), "-l", str(log_file)],
        env={**os.environ, **passwords}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        _wait_listening(process, port, log_file)
        yield SecuredServer(f"nats://127.0.0.1:{port}", tls, passwords, process, log_file)
    finally:
        process.terminate()
        process.wait(10)


def _wait_listening(process: subprocess.Popen[bytes], port: int, log_file: Path, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            err = process.stderr.read().decode() if process.stderr else ""
            raise RuntimeError(f"nats-server exited: {err or log_file.read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nats-server did not listen on {port} within {timeout}s")
