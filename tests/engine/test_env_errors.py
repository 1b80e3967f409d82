"""A refused APOLLO_* variable is named in its one-line error (the key alone leaves a user searching)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.config import load_settings
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
