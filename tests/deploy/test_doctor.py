"""`apollo doctor` says what is broken and how to fix it; `apollo streams ensure` applies definitions."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from engine.cli.doctor import Check, check_models, check_nats, diagnose, exit_code, render, sandbox_checks
from engine.cli.main import main
from engine.config.settings import validate
from engine.models.fake_server import FakeOpenAIServer
from engine.nats.server import NatsServerProcess, free_port
from engine.runtime.worker_metrics import Metrics, MetricsServer

DEMO = Path(__file__).resolve().parents[2] / "examples" / "scripted" / "demo.json"
PROTECTIONS = [
    "pid_namespace",
    "network_namespace",
    "filesystem_view",
    "landlock",
    "no_new_privs",
    "empty_environment",
    "rlimits",
]


def _settings(tmp_path: Path, **raw: object):
    return validate({"data_dir": str(tmp_path / "data"), **raw})


def _by_name(checks: list[Check]) -> dict[str, Check]:
    return {c.name: c for c in checks}


async def test_no_running_engine_says_commands_start_their_own(tmp_path: Path) -> None:
    """Nothing configured and nothing running is fine: solve and run start an embedded server."""
    checks = await check_nats(_settings(tmp_path), monitor_url=None, timeout=1.0)
    assert [c.status for c in checks] == ["ok"]
    assert "embedded nats-server" in checks[0].detail
    assert "apollo up" in checks[0].detail  # what submit and worker need instead
    assert exit_code(checks) == 0


async def test_no_running_engine_and_no_server_binary_is_an_essential_failure(tmp_path: Path, monkeypatch) -> None:
    """Without nats-server nothing can start an engine: FAIL with the fix."""
    import engine.nats.server

    def missing(explicit: str | None = None) -> Path:
        raise engine.nats.server.ServerError("nats-server not found: run the set-up command")

    monkeypatch.setattr(engine.nats.server, "find_server_binary", missing)
    [check] = await check_nats(_settings(tmp_path), monitor_url=None, timeout=1.0)
    assert check.status == "fail"
    assert "nats-server not found" in check.detail
    assert "install nats-server" in check.fix


async def test_unreachable_nats_is_reported(tmp_path: Path) -> None:
    """A URL nobody listens on fails with the URL and why (refused), not a bare "no servers"."""
    url = f"nats://127.0.0.1:{free_port()}"
    [check] = await check_nats(_settings(tmp_path, nats={"url": url}), monitor_url=None, timeout=1.0)
    assert check.status == "fail" and url in check.detail
    assert "connection refused" in check.detail


@pytest.mark.nats
async def test_missing_stream_says_to_run_streams_ensure(nats_server, tmp_path: Path) -> None:
    """A bare server with JetStream: server ok, stream missing with the command to fix it."""
    checks = _by_name(
        await check_nats(_settings(tmp_path, nats={"url": nats_server.url}), monitor_url=None, timeout=2.0)
    )
    assert checks["server"].status == "ok"
    assert checks["jetstream"].status == "ok"
    assert checks["APOLLO"].status == "fail" and "apollo streams ensure" in checks["APOLLO"].fix


@pytest.mark.nats
def test_streams_ensure_creates_everything_and_doctor_agrees(nats_server, tmp_path: Path, capsys) -> None:
    """After `apollo streams ensure` the stream, consumer and buckets check ok."""
    assert main(["--nats-url", nats_server.url, "streams", "ensure", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["stream"]["name"] == "APOLLO" and summary["stream"]["replicas"] == 1
    assert [c["name"] for c in summary["consumers"]] == ["apollo-workers"]
    assert {b["name"] for b in summary["buckets"]} >= {"KV_apollo-handled", "OBJ_apollo-payloads"}
    checks = _by_name(
        asyncio.run(
            check_nats(
                _settings(tmp_path, nats={"url": nats_server.url}),
                monitor_url=f"http://127.0.0.1:{free_port()}",
                timeout=1.0,
            )
        )
    )
    for name in ("APOLLO", "apollo-workers", "KV_apollo-handled", "KV_apollo-checkpoints", "OBJ_apollo-payloads"):
        assert checks[name].status == "ok", checks[name]
    assert checks["fsync"].status == "warn"  # monitoring not reachable: cannot tell


@pytest.mark.nats
async def test_fsync_is_read_from_the_monitoring_endpoint(tmp_path: Path) -> None:
    """/varz of a server with sync_interval always reports fsync before ack."""
    port = free_port()
    with NatsServerProcess(store_dir=tmp_path / "s", fsync_always=True, extra_args=["-m", str(port)]) as server:
        checks = _by_name(
            await check_nats(
                _settings(tmp_path, nats={"url": server.url}), monitor_url=f"http://127.0.0.1:{port}", timeout=2.0
            )
        )
    assert checks["fsync"].status == "ok"


def test_streams_ensure_without_nats_is_a_clear_error(tmp_path: Path, monkeypatch, capsys) -> None:
    """No URL and no running engine: exit 1 with one line saying what to set."""
    monkeypatch.setenv("APOLLO_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("APOLLO_NATS_URL", raising=False)
    assert main(["streams", "ensure"]) == 1
    assert "APOLLO_NATS_URL" in capsys.readouterr().err


def test_streams_ensure_rejects_a_bad_replica_count(capsys) -> None:
    """--replicas accepts 1, 3 or 5 only."""
    with pytest.raises(SystemExit) as exit_info:
        main(["streams", "ensure", "--replicas", "2"])
    assert exit_info.value.code == 2


async def test_model_endpoint_that_serves_the_model_is_ok(tmp_path: Path) -> None:
    """GET /v1/models lists the configured model: ok."""
    async with FakeOpenAIServer(models=("m-1",)) as fake:
        settings = _settings(tmp_path, models={"policy": {"model": "m-1", "base_url": fake.base_url}})
        [check] = await check_models(settings, timeout=2.0)
    assert check.status == "ok"


async def test_model_endpoint_serving_another_model_fails(tmp_path: Path) -> None:
    """The server neither lists nor answers the configured name: fail, with the names it has."""
    async with FakeOpenAIServer(models=("other",), refuse_unlisted=True) as fake:
        settings = _settings(tmp_path, models={"verifier": {"model": "m-1", "base_url": fake.base_url}})
        [check] = await check_models(settings, timeout=2.0)
    assert check.status == "fail" and "other" in check.detail


async def test_a_name_not_listed_but_answered_is_ok(tmp_path: Path) -> None:
    """A server that takes any name (llama.cpp) answers the one-token request: ok, saying it was not listed."""
    async with FakeOpenAIServer(models=("other",)) as fake:
        settings = _settings(tmp_path, models={"verifier": {"model": "m-1", "base_url": fake.base_url}})
        [check] = await check_models(settings, timeout=2.0)
    assert check.status == "ok" and "not listed" in check.detail


async def test_unreachable_or_non_openai_model_endpoints_fail(tmp_path: Path) -> None:
    """Nobody listening, or a server that is not OpenAI-compatible: both fail."""
    server = MetricsServer(Metrics(), host="127.0.0.1", port=0).start()
    try:
        settings = _settings(
            tmp_path,
            models={
                "policy": {"model": "m", "base_url": f"http://127.0.0.1:{free_port()}/v1"},
                "verifier": {"model": "m", "base_url": f"http://127.0.0.1:{server.port}/v1"},
            },
        )
        checks = await check_models(settings, timeout=2.0)
    finally:
        server.stop()
    assert [c.status for c in checks] == ["fail", "fail"]


async def test_a_relative_scripted_model_is_found_as_solve_finds_it(tmp_path: Path, monkeypatch) -> None:
    """``scripted:examples/...`` run from another folder resolves from the checkout, like solve."""
    monkeypatch.chdir(tmp_path)
    settings = _settings(tmp_path, models={"policy": {"model": "scripted:examples/scripted/demo.json"}})
    [check] = await check_models(settings, timeout=1.0)
    assert check.status == "warn", check.detail
    assert str(DEMO) in check.detail


async def test_scripted_models_are_labelled_and_missing_scripts_fail(tmp_path: Path) -> None:
    """scripted: is a warning (not a real model); a scripted file that does not exist fails."""
    script = tmp_path / "s.json"
    script.write_text('{"rules": []}')
    settings = _settings(
        tmp_path, models={"policy": {"model": f"scripted:{script}"}, "verifier": {"model": "scripted:/nope.json"}}
    )
    checks = _by_name(await check_models(settings, timeout=1.0))
    assert checks["policy"].status == "warn" and "scripted" in checks["policy"].detail
    assert checks["verifier"].status == "fail"


def test_sandbox_that_cannot_start_fails() -> None:
    """No protection at all means the python tool cannot run safely."""
    [check] = sandbox_checks([("sandbox", False, "no namespaces")])
    assert check.status == "fail"


def test_missing_optional_protection_warns_but_missing_limits_fail() -> None:
    """Landlock alone missing (namespaces still isolate) warns; no rlimits fails."""
    rows = [(name, name != "landlock", "d") for name in PROTECTIONS]
    assert {c.name: c.status for c in sandbox_checks(rows)}["landlock"] == "warn"
    rows = [(name, name != "rlimits", "d") for name in PROTECTIONS]
    assert exit_code(sandbox_checks(rows)) == 1


def test_network_isolation_needs_one_of_two_layers() -> None:
    """No network namespace is only fatal when Landlock is missing too."""
    rows = [(name, name != "network_namespace", "d") for name in PROTECTIONS]
    assert exit_code(sandbox_checks(rows)) == 0
    rows = [(name, name not in ("network_namespace", "landlock"), "d") for name in PROTECTIONS]
    assert exit_code(sandbox_checks(rows)) == 1


def test_render_gives_a_verdict_and_fixes() -> None:
    """The report ends with a verdict and prints each fix under its finding."""
    text = render([Check("a", "b", "fail", "broken", "do this"), Check("c", "d", "ok", "fine")])
    assert "fix: do this" in text
    assert text.splitlines()[-1].startswith("essential checks failed: 1 failed")


async def test_diagnose_without_sandbox_probe_covers_tools_and_models(tmp_path: Path) -> None:
    """The full diagnosis lists the registered tools and the model check."""
    checks = await diagnose(_settings(tmp_path), sandbox=False, timeout=1.0)
    areas = {c.area for c in checks}
    assert {"nats", "tools", "models"} <= areas
    assert {c.name for c in checks if c.area == "tools"} >= {"python_code", "local_rag"}


@pytest.mark.nats
async def test_a_server_without_fsync_before_ack_is_a_warning(tmp_path: Path) -> None:
    """/varz without sync_always: warn and name the setting to add."""
    port = free_port()
    with NatsServerProcess(store_dir=tmp_path / "s", extra_args=["-m", str(port)]) as server:
        checks = _by_name(
            await check_nats(
                _settings(tmp_path, nats={"url": server.url}), monitor_url=f"http://127.0.0.1:{port}", timeout=2.0
            )
        )
    assert checks["fsync"].status == "warn" and "sync_interval: always" in checks["fsync"].fix
