"""A NATS URL nobody answers ends a connect within ``nats.connect_timeout``, with one reason."""

from __future__ import annotations

import asyncio

import pytest
import structlog

from engine.app.bootstrap import open_runtime
from engine.config.settings import load_settings
from engine.errors import ConfigError, ConnectError
from engine.nats.jetstream import JetStreamEventLog
from engine.nats.server import free_port


def _dead_url() -> str:
    """A loopback port nobody listens on (bound once to find it, then released)."""
    return f"nats://127.0.0.1:{free_port()}"


async def test_a_refused_url_raises_one_connect_error_naming_it_and_the_reason() -> None:
    """Connection refused is retried quietly, then reported once with the URL."""
    url = _dead_url()
    with structlog.testing.capture_logs() as logs, pytest.raises(ConnectError) as caught:
        await asyncio.wait_for(JetStreamEventLog.connect(url, connect_timeout=1.0), 60)
    assert url in str(caught.value)
    assert "connection refused" in str(caught.value)
    assert "within 1 s" in str(caught.value)
    assert not [entry for entry in logs if entry["event"] in {"nats_error", "nats_disconnected"}]


async def test_a_list_of_dead_servers_is_given_up_on_as_a_whole() -> None:
    """Every server of a comma-separated URL is tried within the one bound."""
    url = f"{_dead_url()},{_dead_url()}"
    with pytest.raises(ConnectError, match="cannot reach NATS at"):
        await asyncio.wait_for(JetStreamEventLog.connect(url, connect_timeout=1.0), 60)


async def test_a_password_in_the_url_is_not_echoed() -> None:
    """The one line names the servers with their user info masked."""
    url = _dead_url().replace("//", "//worker:s3cret@")
    with pytest.raises(ConnectError) as caught:
        await asyncio.wait_for(JetStreamEventLog.connect(url, connect_timeout=1.0), 60)
    assert "s3cret" not in str(caught.value)
    assert f"cannot reach NATS at {url.replace('worker:s3cret', '***')} within 1 s" in str(caught.value)


async def test_open_runtime_uses_the_configured_connect_timeout(tmp_path) -> None:
    """``APOLLO_NATS_CONNECT_TIMEOUT`` reaches the connect (the message says the bound used)."""
    settings = load_settings(environ={"APOLLO_NATS_URL": _dead_url(), "APOLLO_NATS_CONNECT_TIMEOUT": "0.5",
                                      "APOLLO_DATA_DIR": str(tmp_path)})
    with pytest.raises(ConnectError, match=r"within 0\.5 s"):
        await asyncio.wait_for(open_runtime(settings, start_server=False), 60)


async def test_a_live_server_still_connects(nats_server) -> None:
    """The bound only applies to failing: a reachable server connects as before."""
    log = await JetStreamEventLog.connect(nats_server.url, connect_timeout=1.0)
    try:
        assert log.nc.is_connected
    finally:
        await log.close()


@pytest.mark.parametrize("value", ["soon", "0", "-3", "nan", "inf", "1e9", ""])
def test_a_garbage_connect_timeout_is_refused_naming_the_key(value: str) -> None:
    """Non-numbers, zero, negatives and absurd values are one config error (empty means unset)."""
    environ = {"APOLLO_NATS_CONNECT_TIMEOUT": value}
    if value == "":
        assert load_settings(environ=environ).nats.connect_timeout == 5.0
        return
    with pytest.raises(ConfigError, match="connect_timeout"):
        load_settings(environ=environ)


def test_a_garbage_connect_timeout_in_a_config_file_is_refused(tmp_path) -> None:
    """The file key gets the same check as the environment variable."""
    config = tmp_path / "apollo.yaml"
    config.write_text("nats:\n  connect_timeout: [1, 2]\n")
    with pytest.raises(ConfigError, match="connect_timeout"):
        load_settings(config, environ={})
