"""What `apollo worker` says when it joins and stops: a line for a person, a JSON record for a collector."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from engine.app.supervisor import _say
from engine.config.settings import validate


def test_a_person_gets_a_line_and_a_json_log_gets_a_record(capsys: pytest.CaptureFixture[str]) -> None:
    """With --log-json nothing but JSON records may reach the output, so the news is a log record."""
    _say(validate({}), "apollo worker: stopped", "worker_stopped")
    assert capsys.readouterr().err == "apollo worker: stopped\n"
    with capture_logs() as records:
        _say(validate({"log": {"json": True}}), "apollo worker: stopped", "worker_stopped", nats_url="nats://x")
    assert capsys.readouterr() == ("", "")
    assert [(r["event"], r.get("nats_url")) for r in records] == [("worker_stopped", "nats://x")]
