"""The engine state file: a live engine is joined, a dead one is cleaned up and said so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from engine.nats.server import NatsServerProcess
from engine.runtime.engine_state import STATE_FILE, live_engine_url, read_state, write_state


def _dead_pid() -> int:
    """The id of a process that has ended (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])  # our own interpreter
    child.wait()
    return child.pid


def test_the_engine_of_a_live_owner_and_server_is_joined(tmp_path) -> None:
    """This process owns a running server: its URL is returned and the file stays."""
    with NatsServerProcess(store_dir=tmp_path / "nats") as server:
        write_state(tmp_path, url=server.url, server_pid=server.process.pid, store_dir=tmp_path / "nats")
        assert live_engine_url(tmp_path) == server.url
        assert (tmp_path / STATE_FILE).exists()


def test_a_dead_owner_has_its_leftover_server_stopped_and_the_state_removed(tmp_path, capsys) -> None:
    """`apollo up` killed outright: its orphaned nats-server is stopped and the user told so."""
    server = NatsServerProcess(store_dir=tmp_path / "nats").start()
    try:
        (tmp_path / STATE_FILE).write_text(json.dumps(
            {"url": server.url, "pid": _dead_pid(), "server_pid": server.process.pid}))
        assert live_engine_url(tmp_path) is None
        assert server.process.wait(30) is not None  # stopped, not left running
        assert not (tmp_path / STATE_FILE).exists()
        message = capsys.readouterr().err
        assert "is not running" in message
        assert "stopped its leftover nats-server" in message
        assert "apollo up" in message
    finally:
        server.stop()


def test_a_dead_server_with_a_live_owner_is_stale_too(tmp_path, capsys) -> None:
    """Nothing answers at the recorded URL: the state goes, nothing else is touched."""
    write_state(tmp_path, url="nats://127.0.0.1:1", server_pid=_dead_pid(), store_dir=tmp_path)
    assert live_engine_url(tmp_path) is None
    assert not (tmp_path / STATE_FILE).exists()
    assert "is not running" in capsys.readouterr().err


def test_a_reused_server_pid_is_never_signalled(tmp_path) -> None:
    """A recorded server id now used by another program (here: this test) is left alone."""
    (tmp_path / STATE_FILE).write_text(json.dumps(
        {"url": "nats://127.0.0.1:1", "pid": _dead_pid(), "server_pid": os.getpid()}))
    assert live_engine_url(tmp_path) is None  # reaching the next line means we were not killed
    assert not (tmp_path / STATE_FILE).exists()


@pytest.mark.parametrize("content", ["", "not json", "[]", '{"url": 5}', '{"pid": 1}', "\x00\xff"])
def test_a_garbage_state_file_means_no_engine(tmp_path, content: str) -> None:
    """An unreadable or malformed state file is ignored, never an error."""
    (tmp_path / STATE_FILE).write_text(content)
    assert read_state(tmp_path) is None
    assert live_engine_url(tmp_path) is None


def test_a_commands_private_server_is_recorded_as_not_shared(tmp_path) -> None:
    """A command's own server is marked private in the state file; an engine's (and an old file's) is shared."""
    with NatsServerProcess(store_dir=tmp_path / "nats") as server:
        write_state(tmp_path, url=server.url, server_pid=server.process.pid, store_dir=tmp_path / "nats",
                    shared=False)
        state = read_state(tmp_path)
        assert state is not None
        assert state.shared is False
    (tmp_path / STATE_FILE).write_text(json.dumps({"url": "nats://127.0.0.1:1", "pid": 1, "server_pid": 2}))
    assert read_state(tmp_path).shared is True


@pytest.fixture
def another_command() -> Iterator[subprocess.Popen]:
    """A live process standing for another apollo command (a `solve`) that owns the server."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        yield process
    finally:
        process.kill()
        process.wait()


async def test_a_command_that_needs_workers_refuses_another_commands_private_server(
        tmp_path, another_command: subprocess.Popen) -> None:
    """`apollo run` beside a running `apollo solve` (no `apollo up`) says whose server it is and what
    to do, instead of handing its runs to the solve's workers, which stop when the solve ends;
    a command that only reads still uses it."""
    from engine.app.bootstrap import open_runtime
    from engine.config.settings import validate
    from engine.errors import ConnectError
    from engine.nats.jetstream import JetStreamEventLog

    settings = validate({"data_dir": str(tmp_path)})
    with NatsServerProcess(store_dir=tmp_path / "nats") as server:
        await (await JetStreamEventLog.connect(server.url, manage_streams=True)).close()  # as the solve made it
        (tmp_path / STATE_FILE).write_text(json.dumps(
            {"url": server.url, "pid": another_command.pid, "server_pid": server.process.pid, "shared": False}))
        with pytest.raises(ConnectError, match=r"another apollo command .* `apollo up`"):
            await open_runtime(settings, start_server=True)
        reading = await open_runtime(settings, start_server=True, quiet=True)
        try:
            assert reading.server is None  # it joined the private server, starting none of its own
        finally:
            await reading.close()
