"""Role passwords: the documented generator always yields values nats-server reads as themselves, and the
doctor names one it would misread (checked against a real nats-server started with deploy/nats/auth.conf)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import nats
import pytest

from engine.cli.doctor import check_passwords
from engine.cli.nats_passwords import SERVER_VARIABLES, misreading, new_password
from engine.config.settings import Settings
from engine.nats.server import find_server_binary, free_port

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "deploy" / "README.md"
AUTH = ROOT / "deploy" / "nats" / "auth.conf"


def _documented_command() -> str:
    """The shell line deploy/README.md gives for making a role password."""
    found = re.search(r"\*\*Creating them\.\*\*.*?```bash\n(.+?)\n```", README.read_text(), re.DOTALL)
    assert found is not None, "deploy/README.md no longer shows how to make a role password"
    return found.group(1)


def _start(tmp_path: Path, passwords: dict[str, str]) -> tuple[subprocess.Popen[bytes], int]:
    """nats-server with the deploy's auth.conf and these role passwords; waits until it answers or exits."""
    port = free_port()
    config = tmp_path / "server.conf"
    shutil.copy(AUTH, tmp_path / "auth.conf")  # nats-server resolves includes relative to the config
    config.write_text(f"listen: 127.0.0.1:{port}\ninclude ./auth.conf\n")
    env = {**os.environ, **passwords}
    process = subprocess.Popen([str(find_server_binary()), "-c", str(config)], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for _ in range(100):
        if process.poll() is not None:
            break
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    return process, port


def _roles(first: str) -> dict[str, str]:
    return {name: first if i == 0 else new_password() for i, name in enumerate(SERVER_VARIABLES)}


@pytest.mark.parametrize(("password", "fragment"), [
    ("12345", "number"), ("4K", "number"), ("1e5abc", "number"), ("-3ab", "number"), ("true", "boolean"),
    ('"q"', "syntax"), ("a b", "syntax"), ("a;b", "syntax"), ("a}b", "syntax"), ("", "empty"),
])  # fmt: skip
def test_passwords_nats_server_misreads_are_named(password: str, fragment: str) -> None:
    """Numbers, booleans, config syntax and empty values are each named with the reason."""
    why = misreading(password)
    assert why is not None and fragment in why


@pytest.mark.parametrize("password", ["pA1+/b=", "Ab_c.d-e", "pe5", new_password()])
def test_letters_first_base64_and_hex_are_read_as_themselves(password: str) -> None:
    """A value starting with a letter, of base64/hex characters, is fine."""
    assert misreading(password) is None


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_the_documented_generator_never_starts_with_a_digit() -> None:
    """200 draws of deploy/README.md's command: every one is read as itself."""
    script = f"for i in $(seq 200); do {_documented_command()}; done"
    draws = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout.split()
    assert len(set(draws)) == 200
    assert [d for d in draws if misreading(d) is not None] == []


def test_the_doctor_names_each_misread_variable(tmp_path: Path) -> None:
    """Each misread role variable is a failed check naming the variable and the fix."""
    environ = {"APOLLO_NATS_WORKER_PASSWORD": "4Kq", "APOLLO_NATS_ADMIN_PASSWORD": new_password()}
    [check] = check_passwords(Settings(), environ)
    assert check.status == "fail" and check.detail.startswith("APOLLO_NATS_WORKER_PASSWORD: it starts with a digit")
    assert "openssl rand -hex 24" in check.fix
    assert check_passwords(Settings(), {name: new_password() for name in SERVER_VARIABLES}) == []


def test_a_real_server_refuses_a_digit_first_password_the_doctor_names(tmp_path: Path) -> None:
    """`1e5...` (a digit first) stops nats-server starting, and the doctor names that variable."""
    passwords = _roles("1e5" + new_password()[1:])
    process, _ = _start(tmp_path, passwords)
    try:
        assert process.wait(10) != 0
    finally:
        process.kill()
    assert process.stderr is not None and b"APOLLO_NATS_SUBMITTER_PASSWORD" in process.stderr.read()
    [check] = check_passwords(Settings(), passwords)
    assert check.detail.startswith("APOLLO_NATS_SUBMITTER_PASSWORD")


async def test_a_real_server_starts_with_generated_passwords_and_admits_them(tmp_path: Path) -> None:
    """Five generated passwords: the server starts and a role connects with its own."""
    passwords = _roles(new_password())
    process, port = _start(tmp_path, passwords)
    try:
        assert process.poll() is None, process.stderr.read() if process.stderr else b""
        client = await nats.connect(f"nats://127.0.0.1:{port}", user="submitter",
                                    password=passwords["APOLLO_NATS_SUBMITTER_PASSWORD"],
                                    allow_reconnect=False, connect_timeout=5)
        await client.close()
    finally:
        process.terminate()
        process.wait(10)
