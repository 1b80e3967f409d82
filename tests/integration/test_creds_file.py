"""`.creds` files (NATS's operator/JWT mode) against a real nats-server.

The operator, account and user JWTs are made here with ``nkeys`` (the NATS JWT layout:
an ed25519-nkey signed header and claims), so no `nsc` tool is needed. The server trusts
the operator and preloads the accounts, as `resolver: MEMORY` deployments do.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.errors import ConnectError
from engine.nats.jetstream import JetStreamEventLog
from engine.nats.security import ClientSecurity
from engine.nats.server import find_server_binary, free_port

nkeys = pytest.importorskip("nkeys")

pytestmark = [pytest.mark.nats, pytest.mark.timeout(120)]

_UNLIMITED = {"subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1, "wildcards": True,
              "conn": -1, "leaf": -1}
_JETSTREAM = {"mem_storage": -1, "disk_storage": -1, "streams": -1, "consumer": -1}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _keypair(prefix: int) -> tuple[bytes, object]:
    seed = nkeys.encode_seed(os.urandom(32), prefix)
    return seed, nkeys.from_seed(seed)


def _public(key: object) -> str:
    return key.public_key.decode()  # type: ignore[attr-defined]


def _jwt(issuer: object, subject: str, name: str, nats: dict) -> str:
    """A NATS v2 JWT for ``subject``, signed by ``issuer``."""
    claims = {"iat": int(time.time()), "iss": _public(issuer), "name": name, "sub": subject,
              "nats": {**nats, "version": 2}}
    claims["jti"] = base64.b32encode(hashlib.sha256(json.dumps(claims, sort_keys=True).encode()).digest()).decode()
    head = _b64(json.dumps({"typ": "JWT", "alg": "ed25519-nkey"}).encode())
    body = _b64(json.dumps(claims).encode())
    return f"{head}.{body}.{_b64(issuer.sign(f'{head}.{body}'.encode()))}"  # type: ignore[attr-defined]


def _creds_file(path: Path, account: object, name: str) -> Path:
    seed, user = _keypair(nkeys.PREFIX_BYTE_USER)
    token = _jwt(account, _public(user), name, {"type": "user", "pub": {}, "sub": {}, "subs": -1, "data": -1,
                                                 "payload": -1})
    path.write_text(
        f"-----BEGIN NATS USER JWT-----\n{token}\n------END NATS USER JWT------\n\n"
        f"-----BEGIN USER NKEY SEED-----\n{seed.decode()}\n------END USER NKEY SEED------\n"
    )
    path.chmod(0o600)
    return path


@dataclass
class OperatorServer:
    url: str
    account: object
    """The account the server trusts; users it signs may connect."""


@pytest.fixture
def operator_server(tmp_path: Path) -> Iterator[OperatorServer]:
    """A nats-server in operator mode with one JetStream-enabled account and a system account."""
    _, operator = _keypair(nkeys.PREFIX_BYTE_OPERATOR)
    _, account = _keypair(nkeys.PREFIX_BYTE_ACCOUNT)
    _, system = _keypair(nkeys.PREFIX_BYTE_ACCOUNT)
    port = free_port()
    config = tmp_path / "operator.conf"
    config.write_text(
        f"listen: 127.0.0.1:{port}\n"
        f"operator: {_jwt(operator, _public(operator), 'apollo-operator', {'type': 'operator'})}\n"
        f"system_account: {_public(system)}\n"
        "resolver: MEMORY\n"
        "resolver_preload: {\n"
        f"  {_public(account)}: {_jwt(operator, _public(account), 'apollo', {'type': 'account', 'limits': {**_UNLIMITED, **_JETSTREAM}})}\n"  # noqa: E501
        f"  {_public(system)}: {_jwt(operator, _public(system), 'SYS', {'type': 'account', 'limits': _UNLIMITED})}\n"
        "}\n"
        f'jetstream {{ store_dir: "{tmp_path / "store"}" }}\n'
    )
    process = subprocess.Popen(  # the pinned nats-server binary
        [str(find_server_binary()), "-c", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        yield OperatorServer(url=f"nats://127.0.0.1:{port}", account=account)
    finally:
        process.terminate()
        process.wait(10)


async def _connect_when_up(url: str, security: ClientSecurity) -> JetStreamEventLog:
    """Connect, waiting out the server's start (only 'cannot reach' is waited for)."""
    deadline = asyncio.get_running_loop().time() + 20
    while True:
        try:
            return await JetStreamEventLog.connect(url, security=security)
        except ConnectError as exc:
            if "cannot reach" not in str(exc) or asyncio.get_running_loop().time() > deadline:
                raise


async def test_a_creds_file_signed_by_the_trusted_account_connects_and_appends(
    operator_server: OperatorServer, tmp_path: Path,
) -> None:
    """A user JWT + seed in one .creds file: connected, stream definitions applied, an event stored."""
    from engine.testing.event_builders import submitted

    creds = _creds_file(tmp_path / "worker.creds", operator_server.account, "worker")
    log = await _connect_when_up(operator_server.url, ClientSecurity(creds_file=str(creds)))
    try:
        await log.append(submitted("r-creds"))
        assert await log.run_ids() == ["r-creds"]
    finally:
        await log.close()


async def test_a_creds_file_from_an_untrusted_account_is_refused_in_one_line(
    operator_server: OperatorServer, tmp_path: Path,
) -> None:
    """A user signed by an account the server does not know: one line naming the credentials file."""
    trusted = _creds_file(tmp_path / "ok.creds", operator_server.account, "ok")
    await (await _connect_when_up(operator_server.url, ClientSecurity(creds_file=str(trusted)))).close()  # it is up
    _, stranger_account = _keypair(nkeys.PREFIX_BYTE_ACCOUNT)
    forged = _creds_file(tmp_path / "forged.creds", stranger_account, "forged")
    with pytest.raises(ConnectError, match=re.escape(f"credentials file {forged}")) as refused:
        await JetStreamEventLog.connect(operator_server.url, security=ClientSecurity(creds_file=str(forged)))
    assert "\n" not in str(refused.value)
