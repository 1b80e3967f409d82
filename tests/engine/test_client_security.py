"""Client credentials and TLS settings, the embedded server's secret, and the doctor's access check."""

from __future__ import annotations

import stat
from pathlib import Path

import nats
import nats.errors
import pytest

from engine.app.bootstrap import client_security, open_runtime, start_embedded_server
from engine.cli.doctor import security_check
from engine.config.settings import load_settings, validate
from engine.errors import ConfigError, ConnectError, ServerError
from engine.nats.client_events import permission_violation
from engine.nats.security import ClientSecurity
from engine.nats.server import SECRET_FILE, embedded_secret
from engine.testing.tls import make_tls_files

# -- settings ---------------------------------------------------------------------------------


def test_apollo_nats_variables_fill_the_security_settings(tmp_path: Path):
    """Every APOLLO_NATS_* credential and TLS variable lands in its nats setting."""
    env = {"APOLLO_NATS_CREDS": "/c", "APOLLO_NATS_NKEY_SEED": "/s", "APOLLO_NATS_USER": "worker",
           "APOLLO_NATS_PASSWORD": "pw", "APOLLO_NATS_TOKEN": "tok", "APOLLO_NATS_CA": "/ca",
           "APOLLO_NATS_CERT": "/cert", "APOLLO_NATS_KEY": "/key"}
    nats_settings = load_settings(environ=env).nats
    assert (nats_settings.creds_file, nats_settings.nkey_seed_file, nats_settings.user, nats_settings.password,
            nats_settings.token, nats_settings.ca_file, nats_settings.cert_file, nats_settings.key_file) == (
        "/c", "/s", "worker", "pw", "tok", "/ca", "/cert", "/key")


def test_a_security_setting_of_the_wrong_type_names_the_key():
    """A list where a file path belongs is refused naming nats.ca_file."""
    with pytest.raises(ConfigError, match=r"nats\.ca_file"):
        validate({"nats": {"ca_file": ["a", "b"]}})


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"ca_file": "/no/such/ca.pem"}, "nats.ca_file: /no/such/ca.pem does not exist"),
        ({"creds_file": "/no/such.creds"}, "nats.creds_file: /no/such.creds does not exist"),
        ({"user": "worker"}, "nats.user 'worker' has no nats.password"),
        ({"password": "pw"}, "nats.password is set without nats.user"),
        ({"user": "worker", "password": "pw", "token": "t"}, "set one way to authenticate, not user and token"),
    ],
)
def test_bad_credential_settings_are_refused_naming_the_key(changes, message):
    """Missing files, half a user and two ways at once are refused before any connect."""
    with pytest.raises(ConfigError) as refused:
        ClientSecurity(**changes).connect_options()
    assert message in str(refused.value)
    assert "pw" not in str(refused.value).replace("password", "")


def test_a_certificate_without_its_key_is_refused(tmp_path: Path):
    """A client certificate alone is refused: mutual TLS needs the key too."""
    tls = make_tls_files(tmp_path)
    with pytest.raises(ConfigError, match=r"cert_file and nats\.key_file go together"):
        ClientSecurity(ca_file=str(tls.ca), cert_file=str(tls.client_cert)).connect_options()


@pytest.mark.parametrize("garbage", [b"", b"not a certificate\n", b"\x00\xff" * 50])
def test_a_ca_bundle_that_is_not_pem_is_refused(tmp_path: Path, garbage: bytes):
    """Garbage in the CA bundle file is one line naming nats.ca_file."""
    bundle = tmp_path / "ca.pem"
    bundle.write_bytes(garbage)
    with pytest.raises(ConfigError, match=r"nats\.ca_file: .* is not a PEM CA bundle"):
        ClientSecurity(ca_file=str(bundle)).connect_options()


def _user_seed() -> bytes:
    import os

    import nkeys
    return nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER)


@pytest.mark.parametrize("garbage", [b"", b"garbage\n", b"SUABC\n", b"\x00\xff" * 50,
                                     b"-----BEGIN NATS USER JWT-----\n"])
def test_an_nkey_seed_file_that_is_not_a_seed_is_refused(tmp_path: Path, garbage: bytes):
    """Garbage where a seed should be is one line naming nats.nkey_seed_file (nats-py would raise mid-connect)."""
    seed = tmp_path / "user.nk"
    seed.write_bytes(garbage)
    with pytest.raises(ConfigError, match=r"nats\.nkey_seed_file: .*user\.nk is not an NKey seed"):
        ClientSecurity(nkey_seed_file=str(seed)).connect_options()


@pytest.mark.parametrize("garbage", [b"", b"garbage\n", b"-----BEGIN NATS USER JWT-----\nxyz\n", b"\x00\xff" * 50])
def test_a_creds_file_that_is_not_one_is_refused(tmp_path: Path, garbage: bytes):
    """A file without a user JWT and seed is named as not a credentials file, before the server is asked."""
    creds = tmp_path / "user.creds"
    creds.write_bytes(garbage)
    with pytest.raises(ConfigError, match=r"nats\.creds_file: .*user\.creds is not a NATS credentials file"):
        ClientSecurity(creds_file=str(creds)).connect_options()


def test_a_valid_nkey_seed_file_passes_the_check(tmp_path: Path):
    """A well-formed user seed is handed to nats-py as its file."""
    seed = tmp_path / "user.nk"
    seed.write_bytes(_user_seed() + b"\n")
    assert ClientSecurity(nkey_seed_file=str(seed)).connect_options() == {"nkeys_seed": str(seed)}


def test_a_key_that_does_not_match_the_certificate_is_refused(tmp_path: Path):
    """The server's key with the client's certificate is refused naming both settings."""
    tls = make_tls_files(tmp_path)
    with pytest.raises(ConfigError, match="are not a PEM certificate and its key"):
        ClientSecurity(ca_file=str(tls.ca), cert_file=str(tls.client_cert),
                       key_file=str(tls.server_key)).connect_options()


def test_secrets_never_appear_in_the_description_or_repr():
    """repr and describe() name the method, never the password or token."""
    for security in (ClientSecurity(user="worker", password="s3cret-pw"), ClientSecurity(token="s3cret-tok")):
        assert "s3cret" not in repr(security)
        assert "s3cret" not in security.describe()


def test_permission_violations_give_back_the_subject_with_its_capitals():
    """nats-py lower-cases the server's error; the API subject reads as in the server config."""
    error = nats.errors.Error('nats: permissions violation for publish to "$js.api.stream.info.kv_apollo-handled"')
    assert permission_violation(error) == "$JS.API.STREAM.INFO.KV_apollo-handled"
    assert permission_violation(nats.errors.Error("nats: timeout")) is None


# -- the embedded server's secret ----------------------------------------------------------------


def test_the_embedded_secret_is_made_once_and_readable_by_its_owner_only(tmp_path: Path):
    """The secret file is mode 0600 and the same secret is read back."""
    secret = embedded_secret(tmp_path, create=True)
    path = tmp_path / SECRET_FILE
    assert secret and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert embedded_secret(tmp_path) == secret
    assert embedded_secret(tmp_path / "elsewhere") is None


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604])
def test_an_embedded_secret_other_users_can_read_is_refused(tmp_path: Path, mode: int):
    """A secret file readable by group or others (it may have leaked) is refused, naming the file and the fix."""
    path = tmp_path / SECRET_FILE
    path.write_text("leaked-token\n")
    path.chmod(mode)
    for create in (False, True):
        with pytest.raises(ServerError, match=r"nats-secret is readable by other users .*delete it"):
            embedded_secret(tmp_path, create=create)
    assert path.read_text() == "leaked-token\n"  # left for the user to remove, not silently replaced


async def test_the_embedded_server_refuses_clients_without_the_data_dirs_secret(tmp_path: Path):
    """Another local user (no access to the data dir) cannot connect; apollo's clients of the data dir can."""
    settings = load_settings(environ={"APOLLO_DATA_DIR": str(tmp_path / "data")})
    server = start_embedded_server(settings)
    try:
        config = Path(server.store_dir) / "apollo-nats.conf"
        assert stat.S_IMODE(config.stat().st_mode) == 0o600
        with pytest.raises(nats.errors.Error):
            await nats.connect(server.url, allow_reconnect=False, max_reconnect_attempts=0, connect_timeout=2)
        assert client_security(settings, server.url).describe() == "the data dir's secret"
        runtime = await open_runtime(settings, start_server=False, manage_streams=True)
        await runtime.close()
    finally:
        server.stop()


async def test_a_wrong_token_for_the_embedded_server_is_one_line(tmp_path: Path):
    """A configured token the server does not know is refused naming the method, not the token."""
    settings = load_settings(environ={"APOLLO_DATA_DIR": str(tmp_path / "data")})
    server = start_embedded_server(settings)
    try:
        from engine.nats.jetstream import JetStreamEventLog

        with pytest.raises(ConnectError, match="refused the credentials \\(a token\\)"):
            await JetStreamEventLog.connect(server.url, security=ClientSecurity(token="guessed"))
    finally:
        server.stop()


# -- the doctor's access check -----------------------------------------------------------------


def test_doctor_warns_loudly_when_a_network_server_admits_anyone():
    """A non-loopback server without auth_required is a loud warning naming the risk."""
    check = security_check("nats://10.0.0.5:4222", {"auth_required": False}, ClientSecurity(), encrypted=False)
    assert check.status == "warn"
    assert "ANONYMOUS" in check.detail and "forge a rollout" in check.detail


def test_doctor_accepts_an_open_loopback_server():
    """A server only this host can reach is not flagged for anonymous access."""
    check = security_check("nats://127.0.0.1:4222", {}, ClientSecurity(), encrypted=False)
    assert check.status == "ok"
    assert check.detail == "anonymous, not encrypted"


def test_doctor_warns_about_an_open_server_reached_over_loopback_but_listening_on_all_interfaces():
    """Reached via 127.0.0.1 but listening on 0.0.0.0 (its INFO host), an anonymous server is still flagged."""
    check = security_check("nats://127.0.0.1:4333", {"host": "0.0.0.0"}, ClientSecurity(), encrypted=False)
    assert check.status == "warn"
    assert "127.0.0.1 (listening on 0.0.0.0) accepts ANONYMOUS clients" in check.detail


def test_doctor_accepts_an_open_server_listening_on_loopback_only():
    """The embedded server's case: INFO host 127.0.0.1 is not flagged."""
    check = security_check("nats://127.0.0.1:4333", {"host": "127.0.0.1"}, ClientSecurity(), encrypted=False)
    assert check.status == "ok"


def test_doctor_warns_when_credentials_cross_the_network_in_clear():
    """Authenticated but unencrypted to another host: a warning to enable TLS."""
    check = security_check("nats://nats-1:4222", {"auth_required": True}, ClientSecurity(user="w", password="p"),
                           encrypted=False)
    assert check.status == "warn" and "in clear" in check.detail


async def test_a_refusal_while_reconnecting_is_logged_once_until_reconnected():
    """Revoked credentials on reconnect: one error line, not one per attempt; again after a reconnect."""
    from structlog.testing import capture_logs

    from engine.nats.client_events import ClientEvents

    events = ClientEvents("worker")
    events.client = object()  # connected once
    events.is_refusal = lambda exc: "authorization violation" in str(exc).lower()
    with capture_logs() as logs:
        for _ in range(5):
            await events.on_error(nats.errors.Error("nats: 'Authorization Violation'"))
        await events.on_reconnected()
        await events.on_error(nats.errors.Error("nats: 'Authorization Violation'"))
    refused = [entry for entry in logs if entry["event"] == "nats_refused"]
    assert len(refused) == 2
    assert refused[0]["error"] == "nats: 'Authorization Violation'"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"APOLLO_NATS_CA": "/no/such/ca.pem"}, "nats.ca_file: /no/such/ca.pem does not exist"),
        ({"APOLLO_NATS_USER": "worker"}, "nats.user 'worker' has no nats.password"),
        ({"APOLLO_NATS_TOKEN": "t", "APOLLO_NATS_USER": "w", "APOLLO_NATS_PASSWORD": "p"},
         "set one way to authenticate, not user and token"),
    ],
)
def test_apollo_submit_with_bad_nats_variables_ends_with_one_line(tmp_path: Path, env, message):
    """Garbage in the APOLLO_NATS_* variables: one line naming the setting, no traceback, exit 1."""
    import os
    import subprocess
    import sys

    from tests.deploy.processes import REPO

    done = subprocess.run(  # our own module
        [sys.executable, "-m", "engine", "submit", "What is 2 + 2?"], cwd=REPO, capture_output=True, text=True,
        env={**os.environ, "APOLLO_DATA_DIR": str(tmp_path), "APOLLO_NATS_URL": "nats://127.0.0.1:9", **env},
        timeout=60, check=False,
    )
    assert done.returncode == 1
    assert message in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
