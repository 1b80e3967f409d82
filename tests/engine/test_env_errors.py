"""A refused APOLLO_* variable is named in its one-line error (the key alone leaves a user searching)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.config.settings import load_settings
from engine.errors import ConfigError


@pytest.mark.parametrize(("name", "value", "key"), [
    ("APOLLO_NATS_CONNECT_TIMEOUT", "soon", "nats.connect_timeout"),
    ("APOLLO_NATS_CONNECT_TIMEOUT", "0", "nats.connect_timeout"),
    ("APOLLO_WORKERS", "many", "worker.workers"),
    ("APOLLO_LOG_JSON", "maybe", "log.json"),
    ("APOLLO_LOG_LEVEL", "verbose", "log.level"),
])
def test_a_garbage_variable_is_named_with_its_key(name: str, value: str, key: str):
    """The error names the key and the variable that set it."""
    with pytest.raises(ConfigError) as refused:
        load_settings(environ={name: value})
    message = str(refused.value)
    assert "\n" not in message
    assert f"$.{key}`" in message or f"{key} " in message
    assert message.endswith(f"(from {name})")


def test_a_garbage_file_key_is_not_blamed_on_a_variable(tmp_path: Path):
    """A bad key from the config file carries no variable name, even with other variables set."""
    config = tmp_path / "apollo.yaml"
    config.write_text("nats:\n  connect_timeout: soon\n")
    with pytest.raises(ConfigError) as refused:
        load_settings(config, environ={"APOLLO_NATS_URL": "nats://127.0.0.1:4222"})
    assert "(from " not in str(refused.value)


def test_a_flag_overriding_a_variable_is_not_blamed_on_it():
    """When a command-line value replaced the variable's, the error does not name the variable."""
    with pytest.raises(ConfigError) as refused:
        load_settings(environ={"APOLLO_LOG_LEVEL": "info"}, overrides={"log": {"level": "verbose"}})
    assert "APOLLO_LOG_LEVEL" not in str(refused.value)


@pytest.mark.parametrize("url", ["notaurl", "http://127.0.0.1:4333", "nats://", "nats://host with space:4333",
                                 "nats://127.0.0.1:4333,", "nats://h:port"])
def test_a_nats_url_nats_cannot_dial_is_refused_naming_it(url: str):
    """A URL without a NATS scheme or host is one config error naming it, before any connect is tried."""
    with pytest.raises(ConfigError, match=r"nats\.url must be nats://HOST:PORT .*got '") as refused:
        load_settings(environ={"APOLLO_NATS_URL": url})
    assert str(refused.value).endswith("(from APOLLO_NATS_URL)")


def test_a_refused_nats_url_does_not_echo_its_credentials():
    """user:password inside a bad URL is masked in the error."""
    with pytest.raises(ConfigError) as refused:
        load_settings(environ={"APOLLO_NATS_URL": "http://worker:s3cret@nats-1:4333"})
    assert "s3cret" not in str(refused.value) and "//***@nats-1:4333" in str(refused.value)


@pytest.mark.parametrize("url", ["nats://127.0.0.1:4333", "tls://nats-1:4333", "nats://nats-1", "ws://h:8080/",
                                 "nats://u:p@h:4333", "nats://[::1]:4333", "nats://a:4333, nats://b:4333"])
def test_nats_urls_nats_dials_are_accepted(url: str):
    """The schemes, user info, IPv6 hosts and comma-separated seeds nats-py understands pass."""
    assert load_settings(environ={"APOLLO_NATS_URL": url}).nats.url == url
