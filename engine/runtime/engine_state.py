"""The state file of the engine `apollo up` runs here, and telling a live engine from a dead one.

`apollo up` (or a command that starts its own embedded server) writes ``engine.json`` in
the data dir: the server's URL, the apollo process that owns it and the server's pid.
Other commands read it to join that engine. An owner killed outright (SIGKILL, a closed
terminal before SIGHUP was handled) leaves the file behind, and possibly its nats-server
running with nobody pulling work: joining it would wait for ever. Such an engine is
dead; it is cleaned up here (its server stopped, the file removed) so the next command
can start its own embedded server over the same store.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from engine.runtime.processes import running

log = structlog.get_logger("apollo.engine")

STATE_FILE = "engine.json"
_SERVER_STOP_S = 10.0


@dataclass(frozen=True)
class EngineState:
    """What ``engine.json`` says about the engine that wrote it."""

    url: str
    owner_pid: int | None
    server_pid: int | None
    shared: bool = True
    """Whether the server is an engine's (`apollo up`) that any command may use, or another
    command's private one, which stops when that command ends."""

    @property
    def owner_alive(self) -> bool:
        return self.owner_pid is not None and running(self.owner_pid)

    @property
    def server_alive(self) -> bool:
        # The command line check keeps a reused pid (some other program) from being stopped.
        return self.server_pid is not None and running(self.server_pid) and _is_nats_server(self.server_pid)


def write_state(data_dir: Path, *, url: str, server_pid: int | None, store_dir: Path, shared: bool = True) -> None:
    """Record this process's server; ``shared`` is false for a command's private server."""
    state = {"url": url, "pid": os.getpid(), "server_pid": server_pid, "store_dir": str(store_dir),
             "started_at": time.time(), "shared": shared}
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / STATE_FILE).write_text(json.dumps(state))


def read_state(data_dir: Path) -> EngineState | None:
    """The recorded engine, or None when there is no (readable) state file."""
    try:
        raw: Any = json.loads((data_dir / STATE_FILE).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("url"), str):
        return None
    owner, server = raw.get("pid"), raw.get("server_pid")
    return EngineState(url=raw["url"], owner_pid=owner if isinstance(owner, int) else None,
                       server_pid=server if isinstance(server, int) else None,
                       shared=raw.get("shared", True) is not False)


def clear_state(data_dir: Path, server_pid: int | None) -> None:
    """Remove the state file if it still describes the server ``server_pid``."""
    path = data_dir / STATE_FILE
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text()).get("server_pid") == server_pid:
            path.unlink()


def live_engine_url(data_dir: Path) -> str | None:
    """URL of the engine a live apollo process runs here; a dead one is cleaned up first."""
    state = live_engine(data_dir)
    return state.url if state is not None else None


def live_engine(data_dir: Path) -> EngineState | None:
    """The server a live apollo process runs here (an engine's or a command's private one);
    a dead one is cleaned up first.

    Live means the owning apollo process and its nats-server both exist: the owner runs
    the in-process worker, so without it nothing would take the work.
    """
    state = read_state(data_dir)
    if state is None:
        return None
    if state.owner_alive and state.server_alive:
        return state
    clean_up_dead_engine(data_dir, state)
    return None


def clean_up_dead_engine(data_dir: Path, state: EngineState) -> None:
    """Stop the leftover server of a dead engine and remove its state file, saying so once."""
    stopped = state.server_alive and _stop(state.server_pid)
    clear_state(data_dir, state.server_pid)
    owner = f"pid {state.owner_pid}" if state.owner_pid is not None else "unknown pid"
    leftover = f"; stopped its leftover nats-server (pid {state.server_pid})" if stopped else ""
    if state.owner_alive:  # its server died under it: the owner is there, but nothing can reach it
        server = f"pid {state.server_pid}" if state.server_pid is not None else "unknown pid"
        gone = f"its nats-server, {server}, is gone; its `apollo up`, {owner}, still runs without it: stop it"
    else:
        gone = f"its `apollo up`, {owner}, is gone"
    print(f"apollo: the engine recorded in {data_dir / STATE_FILE} is not running ({gone}){leftover}; removed the "
          "stale state (`apollo up` starts the engine again).", file=sys.stderr, flush=True)
    log.debug("dead_engine_cleaned_up", owner_pid=state.owner_pid, server_pid=state.server_pid, stopped=stopped)


def _stop(pid: int | None) -> bool:
    """SIGTERM (JetStream flushes), then SIGKILL; True once the process is gone."""
    if pid is None:
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + _SERVER_STOP_S
    while time.monotonic() < deadline:
        if not running(pid):
            return True
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    time.sleep(0.2)
    return not running(pid)


def _command_line(pid: int) -> str | None:
    """The process's command line (Linux /proc), or None where it cannot be read."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None


def _is_nats_server(pid: int) -> bool:
    line = _command_line(pid)
    return line is None or "nats-server" in line
