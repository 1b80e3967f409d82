"""`apollo doctor` (is this deployment healthy, and what to fix) and `apollo streams ensure`.

The doctor only reads: it connects with a plain client and never applies definitions,
so running it against production changes nothing. Each finding is a :class:`Check`
with a status (``ok``, ``warn``, ``fail``) and, when not ok, the fix; any ``fail``
makes the command exit 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from engine.app.bootstrap import build_tools, client_security, running_engine_url
from engine.config.settings import Settings, default_data_dir
from engine.errors import ConfigError, ConnectError, EngineError
from engine.nats import server as nats_server
from engine.nats.jetstream import JetStreamEventLog, connect_failure_reason, connection_encrypted
from engine.nats.security import connect_failure, shown_url
from engine.nats.server import MIN_SERVER_VERSION
from engine.nats.streams import Definitions
from engine.sandbox.protections import protection_report

Status = Literal["ok", "warn", "fail"]
WORK_CONSUMER = "apollo-workers"
CLUSTER_REPLICAS = 3
"""The authoritative stream's replication factor in a cluster (tolerates one lost node)."""


@dataclass(frozen=True)
class Check:
    """One finding: what was checked, how it went, and what to do about it."""

    area: str
    name: str
    status: Status
    detail: str
    fix: str = ""


def register(subparsers: Any) -> None:
    doctor = subparsers.add_parser("doctor", help="check NATS, streams, sandbox, tools and models; say what to fix")
    doctor.add_argument("--monitor-url", help="nats-server monitoring URL (default: http://<nats host>:8222)")
    doctor.add_argument("--timeout", type=float, default=3.0, help="seconds per network check (default 3)")
    doctor.add_argument("--skip-sandbox", action="store_true", help="do not start a sandbox probe")
    doctor.add_argument("--json", action="store_true", help="print the checks as JSON")
    doctor.set_defaults(handler=_cmd_doctor)

    streams = subparsers.add_parser("streams", help="stream, consumer and bucket definitions")
    commands = streams.add_subparsers(dest="streams_command", metavar="ACTION")
    commands.required = True
    ensure = commands.add_parser("ensure", help="create or update the stream, consumers and buckets, then list them")
    ensure.add_argument(
        "--replicas",
        type=int,
        choices=(1, 3, 5),
        default=None,
        help="replicas of the stream and buckets (3 in a cluster)",
    )
    ensure.add_argument("--definitions", help="folder with apollo.json, consumers.json, buckets.json")
    ensure.add_argument("--json", action="store_true", help="print what exists as JSON")
    ensure.set_defaults(handler=_cmd_streams_ensure)


# -- apollo doctor ---------------------------------------------------------------------


async def _cmd_doctor(args: argparse.Namespace, settings: Settings) -> int:
    checks = await diagnose(settings, monitor_url=args.monitor_url, timeout=args.timeout, sandbox=not args.skip_sandbox)
    print(json.dumps([asdict(c) for c in checks], indent=2) if args.json else render(checks))
    return exit_code(checks)


async def diagnose(
    settings: Settings,
    *,
    monitor_url: str | None = None,
    timeout: float = 3.0,
    sandbox: bool = True,
) -> list[Check]:
    """Every check, in the order a person would fix things."""
    checks = check_passwords(settings) + await check_nats(settings, monitor_url=monitor_url, timeout=timeout)
    if sandbox:
        checks += await asyncio.to_thread(check_sandbox)
    checks += check_tools(settings)
    checks += await check_models(settings, timeout=timeout)
    return checks


def exit_code(checks: list[Check]) -> int:
    return 1 if any(c.status == "fail" for c in checks) else 0


def render(checks: list[Check]) -> str:
    marks = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}
    lines = [
        f"[{marks[c.status]}] {c.area}: {c.name}: {c.detail}" + (f"\n       fix: {c.fix}" if c.fix else "")
        for c in checks
    ]
    fails = sum(c.status == "fail" for c in checks)
    warns = sum(c.status == "warn" for c in checks)
    verdict = "essential checks failed" if fails else "healthy" if not warns else "usable, with warnings"
    lines.append(f"\n{verdict}: {fails} failed, {warns} warning(s), {len(checks) - fails - warns} ok")
    return "\n".join(lines)


# -- NATS and JetStream ------------------------------------------------------------------


def check_passwords(settings: Settings, environ: dict[str, str] | None = None) -> list[Check]:
    """Role passwords in the environment (and this process's own) that nats-server would misread."""
    # deferred: only the doctor's password check reads the rules
    from engine.cli.nats_passwords import CLIENT_VARIABLE, misread_passwords, misreading

    found = dict(misread_passwords(environ))
    own = settings.nats.password
    if own and CLIENT_VARIABLE not in found and (why := misreading(own)) is not None:
        found["nats.password"] = why
    fix = "make a new one that starts with a letter: printf 'p%s\\n' \"$(openssl rand -hex 24)\" (deploy/README.md)"
    return [Check("nats", "role password", "fail", f"{name}: {why}", fix) for name, why in found.items()]



async def check_nats(settings: Settings, *, monitor_url: str | None, timeout: float) -> list[Check]:
    """Server version, JetStream, stream settings (replicas, fsync), consumer lag, buckets."""
    import nats


    url = settings.nats.url or running_engine_url(settings)
    if url is None:
        return [_embedded_fallback_check()]
    embedded = settings.nats.url is None
    attempts: list[BaseException] = []
    security = client_security(settings, url)
    try:
        options = security.connect_options()
    except ConfigError as exc:
        return [Check("nats", "credentials", "fail", str(exc), "fix the nats settings (APOLLO_NATS_* variables)")]
    try:
        nc = await asyncio.wait_for(
            nats.connect(
                url.split(","),
                connect_timeout=timeout,
                allow_reconnect=False,
                max_reconnect_attempts=0,
                error_cb=_collect(attempts),
                **options,
            ),
            timeout * 2,
        )
    except Exception as exc:  # noqa: BLE001 - any failure to connect is the finding
        if attempts and isinstance(exc, TimeoutError | nats.errors.NoServersError):
            exc = attempts[-1]  # the reason, where nats-py only says it gave up
        refused = connect_failure(exc, shown_url(url), security)
        return [
            Check(
                "nats",
                "server",
                "fail",
                refused or f"cannot connect to {shown_url(url)}: {connect_failure_reason(exc)}",
                "check the role's credentials and CA bundle (deploy/README.md)"
                if refused else "check the URL, that nats-server runs, and firewalls",
            )
        ]
    try:
        return [
            *await _server_checks(nc, url, embedded, monitor_url, timeout, settings.nats.fsync_always),
            # INFO has no public accessor
            security_check(url, nc._server_info, security, encrypted=connection_encrypted(nc)),
        ]
    finally:
        await nc.close()


def security_check(url: str, info: dict[str, Any], security: Any, *, encrypted: bool) -> Check:
    """Is this connection authenticated and encrypted; does the server let anyone in?"""
    host = urlsplit(url.split(",")[0]).hostname or ""
    listen = str(info.get("host") or "")  # where the server listens, as its INFO says
    loopback = _is_loopback(host)  # this connection stays on the host
    open_to_network = not loopback or bool(listen and not _is_loopback(listen))
    if loopback and open_to_network:
        host = f"{host} (listening on {listen})"  # reached here over loopback, but others can reach it too
    how = f"authenticated with {security.describe()}" if security.authenticated else "anonymous"
    detail = f"{how}, {'encrypted (TLS)' if encrypted else 'not encrypted'}"
    if not info.get("auth_required") and open_to_network:
        return Check(
            "nats",
            "access",
            "warn",
            f"!!! {host} accepts ANONYMOUS clients: anyone who reaches it can submit work, append any "
            f"event or forge a rollout ({detail})",
            "serve deploy/nats/*.conf (role users in auth.conf, TLS) and give each process its role's "
            "credentials (deploy/README.md)",
        )
    if not encrypted and not loopback:
        return Check(
            "nats", "access", "warn", f"{detail}: credentials and events cross the network in clear",
            "enable TLS on the server (deploy/nats/*.conf) and set APOLLO_NATS_CA",
        )
    return Check("nats", "access", "ok", detail)


def _is_loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


async def _server_checks(
    nc: Any, url: str, embedded: bool, monitor_url: str | None, timeout: float, fsync_always: bool
) -> list[Check]:
    info = nc._server_info  # nats-py has no public accessor for INFO
    version = nc.connected_server_version
    found = (version.major, version.minor, version.patch)
    wanted = ".".join(map(str, MIN_SERVER_VERSION))
    where = f"{shown_url(url)} ({info.get('server_name', '?')})"
    checks = [
        Check("nats", "server", "ok", f"connected to {where}")
        if found >= MIN_SERVER_VERSION
        else Check(
            "nats",
            "server",
            "fail",
            f"nats-server {'.'.join(map(str, found))} is older than {wanted}",
            f"upgrade to nats-server >= {wanted} (older ones ignore settings apollo relies on)",
        )
    ]
    if not info.get("jetstream"):
        checks.append(
            Check(
                "nats",
                "jetstream",
                "fail",
                "JetStream is not enabled on this server",
                "enable it (`jetstream {}` block or -js); see deploy/nats/",
            )
        )
        return checks
    js = nc.jetstream(timeout=timeout)
    try:
        account = await js.account_info()
    except Exception as exc:  # noqa: BLE001
        checks.append(
            Check(
                "nats",
                "jetstream",
                "fail",
                f"JetStream API does not answer: {exc!r}",
                "check the server log; in a cluster a meta leader must be elected",
            )
        )
        return checks
    cluster = info.get("cluster")
    checks.append(
        Check(
            "nats",
            "jetstream",
            "ok",
            f"{account.streams} stream(s), {account.storage} bytes stored"
            + (f"; cluster {cluster!r}" if cluster else "; single server"),
        )
    )
    checks += await _stream_checks(js, clustered=bool(cluster))
    checks.append(await _fsync_check(url, embedded, monitor_url, timeout, fsync_always))
    return checks


async def _stream_checks(js: Any, *, clustered: bool) -> list[Check]:
    import nats.js.errors


    definitions = Definitions.load()
    name = definitions.stream["name"]
    try:
        stream = await js.stream_info(name)
    except nats.js.errors.NotFoundError:
        return [
            Check(
                "streams",
                name,
                "fail",
                "the stream does not exist",
                "run `apollo streams ensure` (add `--replicas 3` in a cluster)",
            )
        ]
    replicas = stream.config.num_replicas or 1
    detail = f"{stream.state.messages} events, {replicas} replica(s)"
    checks = []
    if clustered and replicas < CLUSTER_REPLICAS:
        checks.append(
            Check(
                "streams",
                name,
                "warn",
                f"{detail} in a cluster: losing one node can lose events",
                f"apollo streams ensure --replicas {CLUSTER_REPLICAS}",
            )
        )
    else:
        checks.append(Check("streams", name, "ok", detail))
    peers = getattr(stream.cluster, "replicas", None) or []
    lagging = [p.name for p in peers if not p.current or p.offline]
    if lagging:
        checks.append(
            Check(
                "streams",
                f"{name} replicas",
                "warn",
                f"not current: {', '.join(lagging)}",
                "check those nodes; the stream keeps working while a majority is current",
            )
        )
    checks.append(await _consumer_check(js, name))
    for bucket in definitions.buckets.get("key_value", []):
        checks.append(await _bucket_check(js, f"KV_{bucket['bucket']}", replicas))
    for bucket in definitions.buckets.get("object_store", []):
        checks.append(await _bucket_check(js, f"OBJ_{bucket['bucket']}", replicas))
    return checks


async def _consumer_check(js: Any, stream: str) -> Check:
    import nats.js.errors

    try:
        info = await js.consumer_info(stream, WORK_CONSUMER)
    except nats.js.errors.NotFoundError:
        return Check(
            "streams",
            WORK_CONSUMER,
            "fail",
            "the work consumer does not exist",
            "run `apollo streams ensure` (or start a worker, which applies the definitions)",
        )
    detail = (
        f"lag {info.num_pending} undelivered, {info.num_ack_pending} in flight, "
        f"{info.num_redelivered} redelivered, {info.num_waiting} waiting pull(s)"
    )
    if info.num_waiting == 0 and info.num_pending > 0:
        return Check(
            "streams",
            WORK_CONSUMER,
            "warn",
            f"{detail}; no worker is pulling",
            "start workers: `apollo up` or `apollo worker` pointed at this NATS",
        )
    return Check("streams", WORK_CONSUMER, "ok", detail)


async def _bucket_check(js: Any, stream: str, replicas: int) -> Check:
    import nats.js.errors

    try:
        info = await js.stream_info(stream)
    except nats.js.errors.NotFoundError:
        return Check("streams", stream, "fail", "bucket missing", "run `apollo streams ensure`")
    have = info.config.num_replicas or 1
    if have < replicas:
        return Check(
            "streams",
            stream,
            "warn",
            f"{have} replica(s), fewer than the stream's {replicas}",
            f"apollo streams ensure --replicas {replicas}",
        )
    return Check("streams", stream, "ok", f"{have} replica(s)")


async def _fsync_check(
    url: str, embedded: bool, monitor_url: str | None, timeout: float, fsync_always: bool
) -> Check:
    """fsync before ack (``sync_interval: always``), read from the server's /varz."""
    target = monitor_url or _default_monitor(url)
    try:
        varz = await asyncio.to_thread(_get_json, f"{target.rstrip('/')}/varz", timeout)
    except Exception as exc:  # noqa: BLE001 - monitoring is optional
        if embedded and not monitor_url:
            if fsync_always:
                return Check("nats", "fsync", "ok", "embedded server started with sync_interval: always")
            return Check(
                "nats",
                "fsync",
                "warn",
                "embedded server without fsync before ack: a power loss can lose recent acked events",
                "set nats.fsync_always: true, or run the cluster in deploy/ for production",
            )
        return Check(
            "nats",
            "fsync",
            "warn",
            f"cannot read {target}/varz ({exc.__class__.__name__}); fsync unknown",
            "enable monitoring (`http: 8222`) or pass --monitor-url; see deploy/nats/",
        )
    config = (varz.get("jetstream") or {}).get("config") or {}
    if config.get("sync_always"):
        return Check(
            "nats", "fsync", "ok", f"{varz.get('server_name', 'server')}: sync_interval always (fsync before ack)"
        )
    return Check(
        "nats",
        "fsync",
        "warn",
        "writes are not fsynced before acknowledgement; a power loss can lose acked events",
        "set `sync_interval: always` in the jetstream block of every node (deploy/nats/)",
    )


def _collect(attempts: list[BaseException]) -> Any:
    """An error callback keeping each failed attempt (nats-py then raises a reasonless
    "no servers available"); the finding reports the last one instead of a log line each."""
    async def keep(exc: Exception) -> None:
        attempts.append(exc)

    return keep


def _embedded_fallback_check() -> Check:
    """No engine to check: commands that need one start their own (the server binary is
    what they need then)."""
    try:
        binary = nats_server.find_server_binary()  # looked up on the module so tests can stand in for it
        version = ".".join(map(str, nats_server.server_version(binary)))
    except (EngineError, OSError) as exc:
        return Check("nats", "server", "fail",
                     f"no `apollo up` runs here and no nats-server can be started: {exc}",
                     "install nats-server (setup.sh does) or set APOLLO_NATS_URL / --nats-url")
    return Check(
        "nats", "server", "ok",
        f"no `apollo up` runs here and no NATS URL is set: solve, run and the other commands start "
        f"their own embedded nats-server ({binary}, {version}) with in-process workers; "
        "submit and worker need `apollo up` (or APOLLO_NATS_URL)",
    )


def _default_monitor(url: str) -> str:
    host = urlsplit(url.split(",")[0]).hostname or "127.0.0.1"
    return f"http://{host}:8222"


def _get_json(url: Any, timeout: float) -> Any:
    """GET a URL (or urllib Request) and parse its JSON body."""
    from urllib.request import urlopen

    with urlopen(url, timeout=timeout) as response:  # an operator-given http(s) URL
        return json.loads(response.read())


# -- sandbox, tools, models ---------------------------------------------------------------

ESSENTIAL_PROTECTIONS = {"rlimits", "empty_environment", "no_new_privs"}
"""Missing any of these fails the doctor; network and files need at least one of two layers."""


def check_sandbox() -> list[Check]:
    try:
        rows = protection_report()
    except Exception as exc:  # noqa: BLE001
        rows = [("sandbox", False, repr(exc))]
    return sandbox_checks(rows)


def sandbox_checks(rows: list[tuple[str, bool, str]]) -> list[Check]:
    """Judge the sandbox's protection report (split out so it is testable without a sandbox)."""
    active = {name for name, ok, _ in rows if ok}
    if not active:
        detail = "; ".join(f"{name}: {text}" for name, _, text in rows) or "no report"
        return [
            Check(
                "sandbox",
                "python_code",
                "fail",
                f"the sandbox cannot start: {detail}",
                "run `apollo sandbox protections`; needs Linux with user namespaces or root",
            )
        ]
    checks = []
    for name, ok, detail in rows:
        if ok:
            checks.append(Check("sandbox", name, "ok", detail))
            continue
        essential = name in ESSENTIAL_PROTECTIONS or (
            (name == "network_namespace" and "landlock" not in active)
            or (name == "filesystem_view" and "landlock" not in active)
        )
        checks.append(
            Check(
                "sandbox",
                name,
                "fail" if essential else "warn",
                detail,
                "enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1) "
                "or run the worker with the capabilities in deploy/k8s/workers.yaml",
            )
        )
    return checks


def check_tools(settings: Settings) -> list[Check]:
    try:
        tools = build_tools(settings)
    except Exception as exc:  # noqa: BLE001
        return [Check("tools", "registry", "fail", f"tools cannot be built: {exc!r}", "see the worker log")]
    episode = settings.episode
    enabled = {"python_code": episode.enable_python_code, "local_rag": episode.enable_local_rag}
    checks = [
        Check("tools", name, "ok", "registered, " + ("enabled" if enabled.get(name, True) else "disabled"))
        for name in sorted(tools)
    ]
    rag_dir = default_data_dir(settings) / "rag"
    if episode.enable_local_rag and not any(rag_dir.glob("*")):
        checks.append(
            Check(
                "tools",
                "local_rag index",
                "fail",
                f"local_rag is enabled but {rag_dir} is empty",
                "build the index: `apollo rag build` (see docs)",
            )
        )
    return checks


async def check_models(settings: Settings, *, timeout: float) -> list[Check]:
    """GET /v1/models on each configured endpoint; scripted models are reported as such."""
    roles = dict(settings.models) or {"policy": settings.model_for("policy")}
    checks: list[Check] = []
    probes: dict[str, asyncio.Task[Any]] = {}
    for role, spec in sorted(roles.items()):
        if spec.model.startswith("scripted:"):
            checks.append(_scripted_check(role, spec.model))
            continue
        if spec.base_url not in probes:
            probes[spec.base_url] = asyncio.create_task(_list_models(spec.base_url, spec.api_key, timeout))
    for role, spec in sorted(roles.items()):
        if spec.model.startswith("scripted:"):
            continue
        try:
            served = await probes[spec.base_url]
        except Exception as exc:  # noqa: BLE001 - unreachable endpoint is the finding
            checks.append(
                Check(
                    "models",
                    role,
                    "fail",
                    await _why_unusable(spec.model, spec.base_url, spec.api_key, timeout)
                    or f"{spec.base_url}: {exc.__class__.__name__}: {exc}",
                    "start the server (`apollo model serve` serves a GGUF on this machine, deploy/vllm/serve.sh "
                    "vLLM) or fix base_url / APOLLO_MODEL_URL",
                )
            )
            continue
        if spec.model in served or (spec.model == "default" and served):
            checks.append(Check("models", role, "ok", f"{spec.model} served at {spec.base_url}"))
        elif await _serves_unlisted(spec.base_url, spec.model, spec.api_key, timeout):
            checks.append(Check("models", role, "ok",
                                f"{spec.model} not listed but answered at {spec.base_url} (the server takes any name)"))
        else:
            checks.append(
                Check(
                    "models",
                    role,
                    "fail",
                    f"{spec.base_url} serves {served or 'nothing'}, not {spec.model!r}",
                    "set the model name to one the server lists (vLLM: --served-model-name)",
                )
            )
    return checks


async def _serves_unlisted(base_url: str, model: str, api_key: str, timeout: float) -> bool:
    """Whether a server that does not list ``model`` answers a one-token request for it (llama.cpp does)."""
    # deferred: only a model name the server does not list is probed
    from engine.models.probe import ProbeFailed, probe_endpoint

    try:
        await probe_endpoint(base_url, model, api_key, timeout=timeout)
    except ProbeFailed:
        return False
    return True


def _scripted_check(role: str, model: str) -> Check:
    # deferred: the model router pulls in openai, which `apollo --help` never needs
    from engine.models.router import resolve_scripted_path

    path = resolve_scripted_path(model.removeprefix("scripted:"))  # found the way solve finds it
    if not path.is_file():
        return Check(
            "models",
            role,
            "fail",
            f"scripted model file {path} not found",
            "fix the path, or point the role at a real server",
        )
    return Check(
        "models",
        role,
        "warn",
        f"scripted model: canned replies from {path}, not a real model",
        "fine for demos and tests; set APOLLO_MODEL_URL / APOLLO_MODEL for real work",
    )


async def _why_unusable(model: str, base_url: str, api_key: str, timeout: float) -> str | None:
    """The line `solve` and `run` refuse the endpoint with (a refused connection called refused, a URL
    that names no chat server said so), or None when their probe passes."""
    # deferred: the probe imports the openai SDK, only for an endpoint that failed the listing
    from engine.models.probe import ProbeFailed, probe_endpoint

    try:
        await probe_endpoint(base_url, model, api_key, timeout=timeout)
    except ProbeFailed as exc:
        return str(exc)
    return None


async def _list_models(base_url: str, api_key: str, timeout: float) -> list[str]:
    """Model ids an OpenAI-compatible server lists (stdlib HTTP: no extra dependency)."""
    from urllib.request import Request

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    request = Request(f"{base_url.rstrip('/')}/models", headers=headers)  # configured endpoint
    body = await asyncio.to_thread(_get_json, request, timeout)
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        msg = "/models did not return an OpenAI model list"
        raise RuntimeError(msg)
    return [str(item.get("id")) for item in body["data"] if isinstance(item, dict)]


# -- apollo streams ensure --------------------------------------------------------------------


async def _cmd_streams_ensure(args: argparse.Namespace, settings: Settings) -> int:
    summary = await ensure_streams(
        settings, replicas=args.replicas, definitions=Path(args.definitions) if args.definitions else None
    )
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(render_streams(summary))
    return 0


async def ensure_streams(
    settings: Settings, *, replicas: int | None, definitions: Path | None = None
) -> dict[str, Any]:
    """Apply the definitions (create or update), then describe what exists."""
    url = settings.nats.url or running_engine_url(settings)
    if url is None:
        msg = "no NATS to apply definitions to: set APOLLO_NATS_URL / --nats-url, or start `apollo up`"
        raise ConnectError(msg)
    log = await JetStreamEventLog.connect(
        url, definitions=Definitions.load(definitions), replicas=replicas or settings.nats.replicas,
        connect_timeout=settings.nats.connect_timeout, security=client_security(settings, url),
        must_manage_streams=True,
    )
    try:
        return await describe(log.js, log.stream, [c["durable_name"] for c in log.definitions.consumers])
    finally:
        await log.close()


async def describe(js: Any, stream: str, consumers: list[str]) -> dict[str, Any]:
    info = await js.stream_info(stream)
    out: dict[str, Any] = {"stream": _stream_summary(info), "consumers": [], "buckets": []}
    for name in consumers:
        consumer = await js.consumer_info(stream, name)
        out["consumers"].append(
            {
                "name": name,
                "filter": consumer.config.filter_subjects or consumer.config.filter_subject,
                "ack_wait_s": consumer.config.ack_wait,
                "max_ack_pending": consumer.config.max_ack_pending,
                "pending": consumer.num_pending,
                "ack_pending": consumer.num_ack_pending,
            }
        )
    for name in await js.streams_info():
        if name.config.name.startswith(("KV_", "OBJ_")):
            out["buckets"].append(_stream_summary(name))
    return out


def _stream_summary(info: Any) -> dict[str, Any]:
    cluster = info.cluster
    return {
        "name": info.config.name,
        "subjects": info.config.subjects,
        "replicas": info.config.num_replicas or 1,
        "messages": info.state.messages,
        "bytes": info.state.bytes,
        "leader": getattr(cluster, "leader", None),
        "peers": [p.name for p in (getattr(cluster, "replicas", None) or [])],
    }


def render_streams(summary: dict[str, Any]) -> str:
    stream = summary["stream"]
    lines = [
        f"stream {stream['name']} {stream['subjects']}: {stream['messages']} events, "
        f"{stream['replicas']} replica(s)" + (f", leader {stream['leader']}" if stream["leader"] else "")
    ]
    lines += [
        f"  consumer {c['name']} filter={c['filter']} ack_wait={c['ack_wait_s']}s "
        f"pending={c['pending']} in_flight={c['ack_pending']}"
        for c in summary["consumers"]
    ]
    lines += [f"  bucket {b['name']}: {b['messages']} entries, {b['replicas']} replica(s)" for b in summary["buckets"]]
    return "\n".join(lines)
