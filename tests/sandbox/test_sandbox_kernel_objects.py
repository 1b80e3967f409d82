"""No kernel object a call creates outlives it: keyrings, SysV IPC, POSIX mqueues, sockets.

Each class is planted by one call and looked for by the following calls of one long-lived
sandbox, until one of them runs under the same uid as the planting call.
"""

from __future__ import annotations

import json

import pytest
import pytest_asyncio
from conftest import run_cli  # this folder's conftest (a module name every folder's conftest shares)

from engine.sandbox import PythonSandbox, SandboxConfig

ASYNC = pytest.mark.asyncio(loop_scope="module")

PRELUDE = """
import ctypes, errno, os, platform
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = {
    "x86_64": {"add_key": 248, "request_key": 249, "keyctl": 250},
    "aarch64": {"add_key": 217, "request_key": 218, "keyctl": 219},
}[platform.machine()]
def call(name, *args):
    ctypes.set_errno(0)
    result = libc.syscall(NR[name], *args)
    return result, errno.errorcode.get(ctypes.get_errno(), "0")
def c(name, *args):
    ctypes.set_errno(0)
    result = getattr(libc, name)(*args)
    return result, errno.errorcode.get(ctypes.get_errno(), "0")
print("uid", os.getuid())
"""

PLANT = {
    "keyrings": """
for ring in (-1, -2, -3, -4, -5):  # thread, process, session, user, user-session
    print("add_key", ring, call("add_key", b"user", b"apollo-leak", b"secret", 6, ring))
print("join", call("keyctl", 1, b"apollo-named"))  # KEYCTL_JOIN_SESSION_KEYRING
print("persistent", call("keyctl", 22, -1, -4))  # KEYCTL_GET_PERSISTENT
print("request", call("request_key", b"user", b"apollo-leak", None, -4))
""",
    "sysv": """
print("shm", c("shmget", 0x41504F4C, 1 << 20, 0o1600))
print("sem", c("semget", 0x41504F4C, 4, 0o1600))
print("msg", c("msgget", 0x41504F4C, 0o1600))
print("private", c("shmget", 0, 1 << 20, 0o1600))
""",
    "mqueue": """
print("mq", c("mq_open", b"/apollo-leak", os.O_CREAT | os.O_RDWR, 0o600, None))
""",
    "abstract_socket": """
import socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(b"\\0apollo-leak")
s.listen(1)
fd = os.dup(s.fileno())
print("bound", fd)
""",
}

PROBE = {
    "keyrings": """
for ring in (-1, -2, -3, -4, -5):
    print("found", call("keyctl", 10, ring, b"user", b"apollo-leak", 0)[0])  # KEYCTL_SEARCH
print("found", call("request_key", b"user", b"apollo-leak", None, 0)[0])
""",
    "sysv": """
print("found", c("shmget", 0x41504F4C, 0, 0)[0])
print("found", c("semget", 0x41504F4C, 0, 0)[0])
print("found", c("msgget", 0x41504F4C, 0)[0])
for name in ("shm", "sem", "msg"):
    objects = open(f"/proc/sysvipc/{name}").read().splitlines()[1:]
    print("found", 1 if objects else -1)
""",
    "mqueue": """
print("found", c("mq_open", b"/apollo-leak", os.O_RDWR, 0, None)[0])
""",
    "abstract_socket": """
import socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(b"\\0apollo-leak")
    print("found", 1)
except OSError:
    print("found", -1)
""",
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def box() -> PythonSandbox:
    """One long-lived sandbox with a three-uid pool, so uids come round again quickly."""
    sandbox = PythonSandbox(SandboxConfig(timeout_s=20, max_concurrency=1, spares=0))
    await sandbox.start()
    try:
        yield sandbox
    finally:
        await sandbox.close()


def host_file(path: str) -> str:
    """A host file's text (read outside the sandbox)."""
    with open(path) as f:
        return f.read()


def uid_of(stdout: str) -> int:
    """The uid a snippet printed first."""
    return int(stdout.split("\n", 1)[0].split()[1])


@ASYNC
@pytest.mark.parametrize("kind", sorted(PLANT))
async def test_nothing_planted_is_found_by_later_calls(box: PythonSandbox, kind: str) -> None:
    """Objects planted by one call are absent in every later call, same uid included."""
    planted = await box.run(PRELUDE + PLANT[kind])
    assert planted.ok, planted
    if kind in ("sysv", "abstract_socket"):  # really created (keyrings are refused by
        assert "(-1," not in planted.stdout, planted.stdout  # seccomp, mqueues by Landlock)
    uid = uid_of(planted.stdout)
    same_uid_seen = False
    for _ in range(box.config.max_concurrency + box.config.spares + 3):
        probe = await box.run(PRELUDE + PROBE[kind])
        assert probe.ok, probe
        found = [line for line in probe.stdout.splitlines() if line.startswith("found")]
        assert found and all(int(line.split()[1]) < 0 for line in found), probe.stdout
        same_uid_seen |= uid_of(probe.stdout) == uid
    assert same_uid_seen


@ASYNC
async def test_keyring_calls_are_refused(box: PythonSandbox) -> None:
    """add_key, keyctl and request_key fail with EPERM: no key is ever created."""
    outcome = await box.run(PRELUDE + PLANT["keyrings"])
    assert outcome.ok, outcome
    results = [line for line in outcome.stdout.splitlines() if not line.startswith("uid")]
    assert len(results) == 8
    assert all("(-1, 'EPERM')" in line for line in results), outcome.stdout
    assert box.protections()["seccomp"] is True


@ASYNC
async def test_host_sees_no_keys_for_sandbox_uids(box: PythonSandbox) -> None:
    """/proc/key-users on the host lists no sandbox uid after keyring attacks."""
    outcome = await box.run(PRELUDE + PLANT["keyrings"])
    uid = uid_of(outcome.stdout)
    lines = host_file("/proc/key-users").splitlines()
    owners = {int(line.split(":")[0]) for line in lines if line.strip()}
    assert uid not in owners


@ASYNC
async def test_ipc_objects_stay_in_the_calls_namespace(box: PythonSandbox) -> None:
    """SysV objects a call makes are created in its own IPC namespace, never the host's."""
    before = {name: host_file(f"/proc/sysvipc/{name}") for name in ("shm", "sem", "msg")}
    outcome = await box.run(PRELUDE + PLANT["sysv"])
    assert outcome.ok, outcome
    assert "(-1," not in outcome.stdout, outcome.stdout
    after = {name: host_file(f"/proc/sysvipc/{name}") for name in ("shm", "sem", "msg")}
    assert after == before


@ASYNC
async def test_mqueues_die_with_the_ipc_namespace_without_landlock() -> None:
    """With Landlock off, a created POSIX mqueue is still gone for every later call."""
    config = SandboxConfig(timeout_s=20, max_concurrency=1, spares=0, landlock=False)
    async with PythonSandbox(config) as plain:
        planted = await plain.run(PRELUDE + PLANT["mqueue"])
        assert planted.ok and "(-1," not in planted.stdout, planted
        for _ in range(4):
            probe = await plain.run(PRELUDE + PROBE["mqueue"])
            assert "found -1" in probe.stdout, probe


def test_seccomp_programs_are_whole_instructions() -> None:
    """The filter builder emits 8-byte BPF instructions for every supported architecture."""
    from engine.sandbox import seccomp

    for machine in ("x86_64", "aarch64"):
        for refuse_userns in (False, True):
            program = seccomp.build(machine, seccomp.KEYRINGS + seccomp.SYSV_IPC, refuse_user_namespaces=refuse_userns)
            assert len(program) % 8 == 0 and len(program) // 8 < 64


def test_seccomp_refuses_unknown_architectures(monkeypatch: pytest.MonkeyPatch) -> None:
    """On an architecture without a syscall table the filter says so instead of guessing."""
    from engine.sandbox import seccomp

    monkeypatch.setattr(seccomp.platform, "machine", lambda: "sparc64")
    assert seccomp.install(seccomp.KEYRINGS) == "unavailable: no syscall table for sparc64"


def test_cli_runs_cannot_pass_keys_or_sysv_objects() -> None:
    """Two `apollo sandbox run` processes: the first plants, the second finds nothing."""
    planted = run_cli(PRELUDE + PLANT["keyrings"] + PLANT["sysv"])
    assert planted.returncode == 0, planted.stderr
    assert "EPERM" in planted.stdout
    probe = run_cli(PRELUDE + PROBE["keyrings"] + PROBE["sysv"])
    assert probe.returncode == 0, probe.stderr
    result = json.loads(probe.stdout)["result"]
    found = [line for line in result.splitlines() if line.startswith("found")]
    assert found and all(int(line.split()[1]) < 0 for line in found), result
