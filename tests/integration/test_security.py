"""Roles, credentials and TLS against a real nats-server running deploy/nats/single.conf
(auth.conf's role users, TLS with a CA made for the test)."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from engine.app.operations import new_run_id, submission
from engine.config.settings import load_settings
from engine.errors import AccessDenied, ConnectError, PublishError
from engine.models.fake_server import FakeOpenAIServer
from engine.nats.jetstream import JetStreamEventLog
from engine.nats.rollout_source import connect_trainer
from engine.nats.security import ClientSecurity
from engine.nats.server import find_server_binary
from engine.testing.secured_nats import DEPLOY_NATS, SecuredServer, role_passwords, secured_server, shipped_config
from engine.testing.tls import make_tls_files
from events.run import RunCompleted
from events.subjects import subject_for_tag
from tests.deploy.processes import REPO, spawn_worker, wait_finished, wait_pulling
from tests.training.conftest import trajectory

pytestmark = [pytest.mark.nats, pytest.mark.timeout(180)]

ANSWER = "<answer>\\boxed{4}</answer>"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[SecuredServer]:
    with secured_server(tmp_path / "secured") as running:
        yield running


@pytest.fixture
async def admin_log(server: SecuredServer) -> AsyncIterator[JetStreamEventLog]:
    """The admin has applied the stream definitions (`apollo streams ensure`)."""
    log = await JetStreamEventLog.connect(server.url, security=server.role("admin"))
    try:
        yield log
    finally:
        await log.close()


async def _client(server: SecuredServer, role: str) -> JetStreamEventLog:
    return await JetStreamEventLog.connect(server.url, security=server.role(role), manage_streams=False)


async def _stored_subjects(log: JetStreamEventLog) -> list[str]:
    return [record.subject async for record in log.read_all()]


# -- the shipped configuration -------------------------------------------------------------


@pytest.mark.parametrize("name", ["single.conf", "cluster-node1.conf"])
def test_a_shipped_config_without_role_passwords_does_not_start(tmp_path: Path, name: str):
    """Authorisation is on by default: no password variables, no server (never an open one)."""
    tls = make_tls_files(tmp_path / "tls")
    config = shipped_config(name, tmp_path / "conf", tls)
    env = {k: v for k, v in os.environ.items() if not k.startswith("APOLLO_NATS_")}
    checked = subprocess.run(  # the pinned nats-server
        [str(find_server_binary()), "-t", "-c", str(config)], env=env, capture_output=True, text=True, check=False
    )
    assert checked.returncode != 0
    assert "APOLLO_NATS_" in checked.stdout + checked.stderr


def test_every_shipped_server_config_includes_the_roles_and_tls():
    """Each server config includes auth.conf, has a client tls block, and clusters route over mutual TLS."""
    for config in DEPLOY_NATS.glob("*.conf"):
        if config.name == "auth.conf":
            continue
        text = config.read_text()
        assert "include ./auth.conf" in text, config.name
        assert "\ntls {" in text, config.name
        if "cluster {" in text:
            assert "verify_and_map: true" in text and 'user: "CN=apollo-route"' in text, config.name
    assert "no_auth_user" not in (DEPLOY_NATS / "auth.conf").read_text()


# -- who may connect -------------------------------------------------------------------------


async def test_an_anonymous_client_cannot_connect(server: SecuredServer):
    """No credentials: refused at once, with a line saying which variables to set."""
    with pytest.raises(ConnectError, match=re.escape("requires credentials and none are configured")):
        await JetStreamEventLog.connect(server.url, security=ClientSecurity(ca_file=str(server.tls.ca)))


async def test_a_wrong_password_is_refused_naming_the_user(server: SecuredServer):
    """A wrong password ends the connect after one attempt, naming the user and never the password."""
    with pytest.raises(ConnectError) as refused:
        await JetStreamEventLog.connect(server.url, security=server.role("worker", password="not-it"),
                                        connect_timeout=20)
    assert "refused the credentials (user 'worker')" in str(refused.value)
    assert "not-it" not in str(refused.value)
    attempts = server.log_file.read_text().count('authentication error - User "worker"')
    assert attempts == 1, "refused credentials must not be retried"


async def test_a_server_certificate_from_another_ca_is_not_trusted(server: SecuredServer, tmp_path: Path):
    """The client checks the server's certificate against its CA bundle; another CA fails naming it."""
    other = make_tls_files(tmp_path / "other-ca")
    with pytest.raises(ConnectError, match=re.escape(f"is not trusted by the CA bundle {other.ca}")):
        await JetStreamEventLog.connect(server.url, security=server.role("viewer", ca_file=str(other.ca)))


async def test_a_client_with_tls_configured_refuses_a_plaintext_server(nats_server):
    """A CA bundle is configured, the server offers no TLS: the client does not fall back to clear text."""
    ca = make_tls_files(Path(nats_server.store_dir) / "tls").ca
    with pytest.raises(ConnectError, match=re.escape("does not offer TLS")):
        await JetStreamEventLog.connect(nats_server.url, security=ClientSecurity(ca_file=str(ca)))


# -- what each role may do -------------------------------------------------------------------


async def test_a_submitter_submits_and_reads_its_run_but_cannot_forge_events(server, admin_log):
    """Submitting works; a submitter's model.responded or trajectory.sealed is refused by the server."""
    submitter = await _client(server, "submitter")
    try:
        run_id = new_run_id()
        await submitter.append(submission(run_id, "What is 2 + 2?", ground_truth="4"))
        assert [r.event.run_id for r in await submitter.read_run(run_id)] == [run_id]
        for tag in ("model.responded", "trajectory.sealed"):
            with pytest.raises(PublishError, match=re.escape(f"permission to publish to apollo.run.{run_id}.{tag}")):
                await submitter.append_raw(subject_for_tag(run_id, tag), b"{}", msg_id=f"forged-{tag}")
    finally:
        await submitter.close()
    assert await _stored_subjects(admin_log) == [subject_for_tag(run_id, "problem.submitted")]


async def test_a_viewer_reads_but_cannot_append(server, admin_log):
    """A viewer reads runs; its appends, even a submission, are refused."""
    submitter = await _client(server, "submitter")
    run_id = new_run_id()
    try:
        await submitter.append(submission(run_id, "What is 2 + 2?"))
    finally:
        await submitter.close()
    viewer = await _client(server, "viewer")
    try:
        assert [r.subject for r in await viewer.read_run(run_id)] == [subject_for_tag(run_id, "problem.submitted")]
        with pytest.raises(PublishError, match=re.escape("permission to publish")):
            await viewer.append(submission(new_run_id(), "What is 2 + 2?"))
        with pytest.raises(PublishError, match=re.escape("permission to publish")):
            await viewer.append_raw(subject_for_tag(run_id, "run.completed"), b"{}", msg_id=f"{run_id}-done")
    finally:
        await viewer.close()
    assert await _stored_subjects(admin_log) == [subject_for_tag(run_id, "problem.submitted")]


async def test_a_trainer_consumes_sealed_trajectories_but_cannot_submit(server, admin_log):
    """The trainer's durable consumer delivers and acknowledges trajectories; submitting is refused."""
    worker = await _client(server, "worker")
    try:
        sealed = trajectory("g", 0)
        await worker.append(sealed)
    finally:
        await worker.close()
    nc, source = await connect_trainer(server.url, security=server.role("trainer"))
    refused: list[BaseException] = []
    try:
        delivered = await source.fetch(4, timeout=5)
        assert [d.event.event_id for d in delivered] == [sealed.event_id]
        await delivered[0].ack()
        nc._error_cb = _collect(refused)  # observe the server's refusal
        await nc.publish(subject_for_tag(new_run_id(), "problem.submitted"), b"{}")
        await nc.flush()
        await _until(lambda: refused)
        assert await source.ack_floor() >= 1
    finally:
        await nc.close()
    assert "permissions violation for publish" in str(refused[0]).lower()
    assert await _stored_subjects(admin_log) == [subject_for_tag(sealed.run_id, "trajectory.sealed")]


async def test_a_trainer_cannot_open_another_durable(server, admin_log):
    """Only the trainer's own durable name is open to it: another is refused with one line."""
    with pytest.raises(AccessDenied, match=re.escape("CONSUMER.CREATE.APOLLO.apollo-workers")):
        await connect_trainer(server.url, security=server.role("trainer"), durable="apollo-workers")


async def test_a_worker_leaves_stream_definitions_to_the_admin(server, admin_log):
    """A worker may not manage streams; it binds to what the admin made and appends run events."""
    worker = await JetStreamEventLog.connect(server.url, security=server.role("worker"), manage_streams=True)
    try:
        run_id = new_run_id()
        await worker.append(submission(run_id, "What is 2 + 2?"))
        await worker.append_raw(subject_for_tag(run_id, "model.responded"), b"{}", msg_id=f"{run_id}-m")
        with pytest.raises(PublishError, match=re.escape("permission to publish to apollo.policy.updated")):
            await worker.append_raw("apollo.policy.updated", b"{}", msg_id=f"{run_id}-p")
    finally:
        await worker.close()


@pytest.mark.parametrize("role", ["worker", "viewer"])
async def test_streams_ensure_without_the_admin_role_is_one_line(server, admin_log, tmp_path: Path, role: str):
    """`apollo streams ensure` as another role says the admin role is needed, instead of timing out on a listing."""
    env = {**os.environ, **server.env(role), "APOLLO_DATA_DIR": str(tmp_path / "cli")}
    done = await asyncio.to_thread(_apollo, ["streams", "ensure"], env)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "apollo: error: applying the stream definitions needs the admin role: NATS refused this client "
        "permission to publish to $JS.API.STREAM.UPDATE.APOLLO",
    ]


async def test_a_worker_runs_a_problem_end_to_end_under_tls(server, admin_log, tmp_path: Path):
    """`apollo worker` with the worker's credentials and CA solves a problem `apollo submit` sent."""
    async with FakeOpenAIServer(lambda messages: ANSWER) as fake:
        worker = spawn_worker(server.url, tmp_path / "w", "w0", model_url=fake.base_url, extra_env=server.env("worker"))
        try:
            await wait_pulling(admin_log.js, 1)
            env = {**os.environ, **server.env("submitter"), "APOLLO_DATA_DIR": str(tmp_path / "cli")}
            submitted = await asyncio.to_thread(_apollo, ["submit", "What is 2 + 2?", "--answer", "4", "--model",
                                                          "fake-model", "--model-url", fake.base_url], env)
            assert submitted.returncode == 0, submitted.stderr
            run_id = submitted.stdout.strip().splitlines()[-1]
            await wait_finished(admin_log, [run_id])
        finally:
            worker.stop()
    events = [r.event for r in await admin_log.read_run(run_id)]
    assert any(isinstance(e, RunCompleted) for e in events)


async def test_a_submitter_is_told_when_no_worker_pulls(server, admin_log, tmp_path: Path, capsys):
    """solve/run as the submitter role may look at the work queue, so a NATS without workers is named, not silent."""
    from engine.app.bootstrap import open_runtime
    from engine.app.operations import submit, warn_if_no_worker

    settings = load_settings(environ={**server.env("submitter"), "APOLLO_DATA_DIR": str(tmp_path / "cli")})
    runtime = await open_runtime(settings, start_server=False)
    try:
        run_id = new_run_id()
        await submit(runtime.log, submission(run_id, "What is 2 + 2?"))
        await asyncio.wait_for(warn_if_no_worker(runtime, run_id, f"NATS at {server.url}", after=0.1), 60)
    finally:
        await runtime.close()
    [line] = [line for line in capsys.readouterr().err.splitlines() if run_id in line]
    assert f"no worker is pulling work from NATS at {server.url}" in line


async def test_apollo_submit_as_a_viewer_ends_with_one_line(server, admin_log, tmp_path: Path):
    """A permission refusal ends a command with one line naming the refused subject, no traceback."""
    env = {**os.environ, **server.env("viewer"), "APOLLO_DATA_DIR": str(tmp_path / "cli")}
    done = await asyncio.to_thread(_apollo, ["submit", "What is 2 + 2?"], env)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert "permission to publish to apollo.run." in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr  # no client error log line besides it


async def test_apollo_submit_with_a_wrong_ca_ends_with_one_line(server, tmp_path: Path):
    """An untrusted server certificate ends `apollo submit` with one line naming the CA bundle."""
    other = make_tls_files(tmp_path / "other-ca")
    env = {**os.environ, **server.env("submitter"), "APOLLO_NATS_CA": str(other.ca),
           "APOLLO_DATA_DIR": str(tmp_path / "cli")}
    done = await asyncio.to_thread(_apollo, ["submit", "What is 2 + 2?"], env)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert f"not trusted by the CA bundle {other.ca}" in done.stderr


async def test_doctor_reports_an_authenticated_encrypted_connection(server, admin_log):
    """`apollo doctor` with the viewer's credentials says how it is connected."""
    from engine.cli.doctor import check_nats

    env = server.env("viewer")
    settings = load_settings(environ=env)
    checks = await check_nats(settings, monitor_url=None, timeout=3)
    access = next(c for c in checks if c.name == "access")
    assert access.status == "ok"
    assert access.detail == "authenticated with user 'viewer', encrypted (TLS)"
    assert env["APOLLO_NATS_PASSWORD"] not in repr(checks)


def _apollo(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """One `apollo` command in its own process, as a user runs it."""
    return subprocess.run(  # our own module
        [sys.executable, "-m", "engine", *args], cwd=REPO, env=env, capture_output=True, text=True,
        timeout=60, check=False,
    )


def _collect(into: list[BaseException]):
    async def on_error(exc: BaseException) -> None:
        into.append(exc)

    return on_error


async def _until(condition, timeout: float = 5.0) -> None:  # a test's bound
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


# -- the cluster's routes ------------------------------------------------------------------------


def _cluster_node(tmp_path: Path, tls, node: int, ports: dict[str, int], *, route_cert=None) -> Path:
    """deploy/nats/cluster-node<N>.conf (node 4: an intruder posing as node 1) on loopback ports."""
    source = 1 if node == 4 else node
    config = shipped_config(f"cluster-node{source}.conf", tmp_path / f"node{node}", tls,
                            port=ports[f"client{node}"], http_port=ports[f"http{node}"])
    text = config.read_text().replace("listen: 0.0.0.0:6222", f"listen: 127.0.0.1:{ports[f'route{node}']}")
    for peer in (1, 2, 3):
        text = text.replace(f"nats-route://nats-{peer}:6222", f"nats-route://localhost:{ports[f'route{peer}']}")
    if route_cert is not None:
        text = text.replace(f"{tls.ca.parent}/route.pem", str(route_cert[0]))
        text = text.replace(f"{tls.ca.parent}/route-key.pem", str(route_cert[1]))
        text = text.replace(f"server_name: nats-{source}", "server_name: intruder")
    config.write_text(text)
    return config


def _routes_of(http_port: int) -> set[str]:
    import json
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/routez", timeout=2) as answer:  # loopback monitor
        return {route["remote_name"] for route in json.loads(answer.read())["routes"]}


async def test_cluster_routes_need_the_route_certificate(tmp_path: Path):
    """The three shipped nodes route to each other over mutual TLS; a node with another
    certificate of the same CA is refused by route authorisation."""
    from engine.nats.server import free_port

    tls = make_tls_files(tmp_path / "tls")
    ports = {f"{kind}{node}": free_port() for kind in ("client", "http", "route") for node in (1, 2, 3, 4)}
    configs = [_cluster_node(tmp_path, tls, node, ports) for node in (1, 2, 3)]
    configs.append(_cluster_node(tmp_path, tls, 4, ports, route_cert=(tls.server_cert, tls.server_key)))
    env = {**os.environ, **role_passwords()}
    processes = [
        subprocess.Popen(  # noqa: ASYNC220 - the pinned nats-server, started once
            [str(find_server_binary()), "-c", str(config), "-l", str(config.with_suffix(".log"))],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        for config in configs
    ]
    try:
        async def routed() -> bool:
            try:
                return {"nats-1", "nats-3"} <= _routes_of(ports["http2"])
            except OSError:
                return False

        deadline = asyncio.get_running_loop().time() + 30
        while not await routed():
            assert asyncio.get_running_loop().time() < deadline, "the shipped nodes did not form a cluster"
            await asyncio.sleep(0.2)
        await _until(lambda: "authentication error" in configs[1].with_suffix(".log").read_text(), timeout=15)
        assert "intruder" not in _routes_of(ports["http2"])
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(10)


async def test_a_viewer_lists_shows_replays_and_exports_a_finished_run(server, admin_log, tmp_path: Path):
    """The read-only commands work with the viewer's credentials on a run a worker finished under TLS."""
    async with FakeOpenAIServer(lambda messages: ANSWER) as fake:
        worker = spawn_worker(server.url, tmp_path / "w", "w0", model_url=fake.base_url, extra_env=server.env("worker"))
        try:
            await wait_pulling(admin_log.js, 1)
            run_id = new_run_id()
            submitter = await _client(server, "submitter")
            try:
                await submitter.append(submission(run_id, "What is 2 + 2?", ground_truth="4"))
            finally:
                await submitter.close()
            await wait_finished(admin_log, [run_id])
        finally:
            worker.stop()
    env = {**os.environ, **server.env("viewer"), "APOLLO_DATA_DIR": str(tmp_path / "cli")}
    for args in (["runs"], ["show", run_id], ["replay", run_id, "--verify"],
                 ["export", "--format", "jsonl", "--out", str(tmp_path / "out.jsonl")]):
        done = await asyncio.to_thread(_apollo, args, env)
        assert done.returncode == 0, f"apollo {' '.join(args)}: {done.stderr}"
        assert "permission" not in done.stderr.lower() and "violation" not in done.stderr.lower()
    assert run_id in (tmp_path / "out.jsonl").read_text()


async def test_an_nkey_user_connects_with_its_seed_file_and_another_seed_is_refused(tmp_path: Path):
    """NKeys instead of passwords (deploy/README.md): the role's seed file connects; another seed is one line."""
    import nkeys

    from engine.nats.server import free_port

    def user_seed(name: str) -> tuple[Path, str]:
        seed = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER)
        path = tmp_path / f"{name}.nk"
        path.write_bytes(seed + b"\n")
        path.chmod(0o600)
        return path, nkeys.from_seed(seed).public_key.decode()

    seed, public = user_seed("worker")
    other, _ = user_seed("stranger")
    port = free_port()
    config = tmp_path / "nkeys.conf"
    config.write_text(
        f"listen: 127.0.0.1:{port}\njetstream {{ store_dir: \"{tmp_path / 'store'}\" }}\n"
        f"authorization {{ users: [ {{nkey: {public}}} ] }}\n"
    )
    process = subprocess.Popen(  # noqa: ASYNC220 - the pinned nats-server, started once
        [str(find_server_binary()), "-c", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"nats://127.0.0.1:{port}"
    try:
        log = None
        deadline = asyncio.get_running_loop().time() + 15
        while log is None:
            try:
                log = await JetStreamEventLog.connect(url, security=ClientSecurity(nkey_seed_file=str(seed)))
            except ConnectError as exc:
                assert "cannot reach" in str(exc) and asyncio.get_running_loop().time() < deadline
        await log.close()
        with pytest.raises(ConnectError, match=re.escape(f"refused the credentials (nkey seed {other})")):
            await JetStreamEventLog.connect(url, security=ClientSecurity(nkey_seed_file=str(other)))
    finally:
        process.terminate()
        process.wait(10)
