"""Memory is capped per call, for the whole process tree, not per process.

Attackers that slip past ``RLIMIT_AS`` (detached SysV shared memory, unmapped memfds,
several processes, scratch files on top of the heap) stay under the call's cap: with a
memory cgroup per call where the machine gives one, else with the fallback (seccomp
refuses memfds and user namespaces, the IPC namespace caps SysV shared memory).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytest_asyncio
from conftest import assert_still_serving, run_cli

from engine.sandbox import PythonSandbox, SandboxConfig, memcap

ASYNC = pytest.mark.asyncio(loop_scope="module")
MIB = 1 << 20
CAP = 256 * MIB

SHM = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
for i in range(12):
    sid = libc.shmget(0, 64 << 20, 0o1600)
    if sid < 0:
        raise MemoryError(f"shmget: errno {ctypes.get_errno()}")
    addr = libc.shmat(sid, None, 0)
    ctypes.memset(addr, 1, 64 << 20)
    libc.shmdt(ctypes.c_void_p(addr))
    print("step", 64 * (i + 1), flush=True)
print("all")
"""

MEMFD = """
import os
held = []
block = b"x" * (16 << 20)
for i in range(40):
    fd = os.memfd_create(f"m{i}")
    os.write(fd, block)
    held.append(fd)
    print("step", 16 * (i + 1), flush=True)
print("all")
"""

PROCESSES = """
import os, time
for i in range(4):
    if os.fork() == 0:
        data = bytes([1]) * (150 << 20)
        time.sleep(3)  # all four would hold 600 MiB at once
        os._exit(0)
codes = [os.waitstatus_to_exitcode(os.wait()[1]) for _ in range(4)]
print("all" if codes == [0, 0, 0, 0] else f"not all: {codes}")
raise SystemExit(0 if codes == [0, 0, 0, 0] else 1)
"""

SCRATCH_AND_HEAP = """
with open("big", "wb") as f:
    for i in range(60):
        f.write(b"x" * (1 << 20))
print("step", 60, flush=True)
chunks = []
for i in range(10):
    chunks.append(bytes([1]) * (32 << 20))
    print("step", 60 + 32 * (i + 1), flush=True)
print("all")
"""

ATTACKERS = {"shm": SHM, "memfd": MEMFD, "processes": PROCESSES, "scratch": SCRATCH_AND_HEAP}


def reached(stdout: str) -> int:
    """The most MiB an attacker reported holding."""
    steps = [int(line.split()[1]) for line in stdout.splitlines() if line.startswith("step")]
    return max(steps, default=0)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def capped() -> PythonSandbox:
    """A long-lived sandbox with a 256 MiB cap per call."""
    box = PythonSandbox(SandboxConfig(timeout_s=30, call_memory_bytes=CAP, spares=1))
    await box.start()
    try:
        yield box
    finally:
        await box.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fallback() -> PythonSandbox:
    """The same cap without a memory cgroup: the fallback mechanisms only."""
    config = SandboxConfig(timeout_s=30, call_memory_bytes=CAP, spares=1, memory_cgroup=False)
    box = PythonSandbox(config)
    await box.start()
    try:
        yield box
    finally:
        await box.close()


def test_this_machine_reports_its_mechanism() -> None:
    """detect() gives a parent cgroup or says why not (never raises)."""
    cgroups, reason = memcap.detect()
    if cgroups is None:
        assert reason.startswith("unavailable")
    else:
        assert cgroups.version in (1, 2)
        cgroups.close()


@ASYNC
@pytest.mark.parametrize("name", sorted(ATTACKERS))
async def test_an_attacker_stays_under_the_call_cap(capped: PythonSandbox, name: str) -> None:
    """Each way around RLIMIT_AS stops before the call holds more than its cap."""
    outcome = await capped.run(ATTACKERS[name])
    assert "all\n" not in outcome.stdout, outcome
    assert not outcome.ok
    assert reached(outcome.stdout) <= CAP // MIB, outcome.stdout
    await assert_still_serving(capped)


@ASYNC
async def test_the_cgroup_is_used_when_the_machine_allows_it(capped: PythonSandbox) -> None:
    """The worker reports its memory cgroup as applied exactly when the host found one."""
    applied = capped.protections()["memory_cgroup"]
    assert (applied is True) == (capped._cgroups is not None)


@ASYNC
async def test_an_oom_kill_is_reported_as_a_memory_limit(capped: PythonSandbox) -> None:
    """When the kernel kills the call for memory, the result says so."""
    if capped.protections()["memory_cgroup"] is not True:
        pytest.skip("no memory cgroup on this machine")
    outcome = await capped.run(PROCESSES)
    assert "Memory limit exceeded" in outcome.stderr, outcome


@ASYNC
@pytest.mark.parametrize("name", ["memfd", "shm"])
async def test_the_fallback_stops_memory_outside_rlimit_as(fallback: PythonSandbox, name: str) -> None:
    """Without a cgroup, SysV shm stops at the namespace's cap and memfds are refused
    (processes and heap stay bounded only by RLIMIT_AS each, as docs/sandbox.md says)."""
    assert fallback.protections()["memory_cgroup"] == "disabled by configuration"
    outcome = await fallback.run(ATTACKERS[name])
    assert "all\n" not in outcome.stdout, outcome
    assert reached(outcome.stdout) <= CAP // MIB, outcome.stdout
    await assert_still_serving(fallback)


@ASYNC
async def test_the_fallback_refuses_memfds_and_user_namespaces(fallback: PythonSandbox) -> None:
    """memfd_create and a new user namespace fail with EPERM; threads and fork still work."""
    code = (
        "import ctypes, os, threading, subprocess\n"
        "try:\n    os.memfd_create('x')\n    print('memfd ok')\n"
        "except PermissionError:\n    print('memfd refused')\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "print('userns', libc.unshare(0x10000000), ctypes.get_errno())\n"
        "t = threading.Thread(target=print, args=('thread ran',))\nt.start()\nt.join()\n"
        "print(subprocess.run(['echo', 'child ran'], capture_output=True, text=True).stdout,"
        " end='')\n"
    )
    outcome = await fallback.run(code)
    assert outcome.ok, outcome
    assert outcome.stdout.splitlines() == [
        "memfd refused",
        "userns -1 1",
        "thread ran",
        "child ran",
    ]


def test_cli_stops_a_memfd_attacker_at_the_default_cap() -> None:
    """`apollo sandbox run` stops a 3 GiB memfd attacker (default cap 2 GiB) with a failure."""
    code = MEMFD.replace("range(40)", "range(192)")
    done = run_cli(code, "--timeout", "60", timeout=180)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1
    assert json.loads(done.stdout)["status"] == "failed"


@pytest.mark.parametrize(
    ("version", "limit_file", "events_file", "events"),
    [
        (2, "memory.max", "memory.events", "low 0\nhigh 0\nmax 4\noom 2\noom_kill 2\n"),
        (1, "memory.limit_in_bytes", "memory.oom_control", "oom_kill_disable 0\noom_kill 3\n"),
    ],
)
def test_cgroup_files_for_each_version(
    tmp_path: Path, version: int, limit_file: str, events_file: str, events: str
) -> None:
    """A call's group gets its limit in the version's file; OOM kills are read back."""
    groups = memcap.CallCgroups(str(tmp_path), version)
    path = groups.create("w1-0", CAP)
    assert (Path(path) / limit_file).read_text() == str(CAP)
    (Path(path) / events_file).write_text(events)
    assert memcap.oom_kills(path) == int(events.rsplit(" ", 1)[1])
