"""The host owns each call's life: it ends when the whole tree is gone, or at the deadline.

Fake reports, closed output pipes and keep-alives neither end a call early nor extend it;
every call gives its uid back, so later ordinary calls never wait; and a call returns
only once none of its processes is left (many files in scratch, many memfds).
"""

from __future__ import annotations

import asyncio
import json
import os

import pytest
import pytest_asyncio
from conftest import assert_still_serving, run_cli, uid_processes

from engine.sandbox import PythonSandbox, SandboxConfig

ASYNC = pytest.mark.asyncio(loop_scope="module")

FAKE_DONE = """
import os, socket, time
fake = [b'D{"returncode": 0, "cpu_s": 0.0}', b'S{"status": 0, "cpu_s": 0.0}']
for fd in range(3, 256):
    for data in fake:
        try:
            s = socket.socket(fileno=os.dup(fd))
            s.send(data)
            s.detach()
        except OSError:
            pass
os.close(1)
os.close(2)
while True:
    time.sleep(0.2)
"""

KEEP_ALIVE = """
import os, sys, time
for fd in range(3, 256):
    try:
        os.write(fd, b'S{"status": 0}')
    except OSError:
        pass
while True:
    print("still here", flush=True)
    sys.stderr.write("alive\\n")
    time.sleep(0.2)
"""

ORPHAN_WITH_CLOSED_PIPES = """
import os, time
if os.fork() == 0:
    os.setsid()
    os.close(1)
    os.close(2)
    if os.fork() == 0:
        while True:
            time.sleep(0.2)
    os._exit(0)
os.wait()
print(os.getuid())
"""

IGNORE_EVERYTHING = """
import os, signal, time
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGXCPU):
    signal.signal(sig, signal.SIG_IGN)
os.close(0)
os.close(1)
os.close(2)
for _ in range(8):
    if os.fork() == 0:
        os.setsid()
        break
while True:
    pass
"""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def small_box() -> PythonSandbox:
    """A sandbox with a small uid pool, so leaked uids would stall it quickly."""
    box = PythonSandbox(SandboxConfig(timeout_s=10, max_concurrency=2, spares=0))
    await box.start()
    try:
        yield box
    finally:
        await box.close()


def pool_size(box: PythonSandbox) -> int:
    """How many uids a sandbox's pool holds when nothing runs."""
    return box.config.max_concurrency + box.config.spares + 2


@ASYNC
@pytest.mark.parametrize("code", [FAKE_DONE, KEEP_ALIVE, IGNORE_EVERYTHING])
async def test_a_snippet_cannot_end_or_extend_its_call(sandbox: PythonSandbox, code: str) -> None:
    """Fake reports, closed pipes, keep-alives and ignored signals all end as a Timeout."""
    outcome = await sandbox.run(code, timeout=2)
    assert outcome.run_status == "Timeout", outcome
    assert outcome.killed_for == "timeout"
    assert outcome.stderr == "Code execution timed out after 2 seconds"
    await assert_still_serving(sandbox)


@ASYNC
async def test_a_finished_parent_ends_the_call_with_its_orphans(sandbox: PythonSandbox) -> None:
    """When the code's own process exits, the call ends and its orphans are gone with it."""
    outcome = await sandbox.run(ORPHAN_WITH_CLOSED_PIPES, timeout=20)
    assert outcome.ok, outcome
    uid = int(outcome.stdout)
    assert uid_processes(uid) == []


@ASYNC
async def test_nasty_calls_never_exhaust_the_uid_pool(small_box: PythonSandbox) -> None:
    """Three pools' worth of nasty calls, then an ordinary call is still answered."""
    rounds = 3 * pool_size(small_box)
    codes = [(FAKE_DONE, KEEP_ALIVE, IGNORE_EVERYTHING)[i % 3] for i in range(rounds)]
    outcomes = await asyncio.wait_for(asyncio.gather(*(small_box.run(code, timeout=1) for code in codes)), 300)
    assert {o.run_status for o in outcomes} == {"Timeout"}
    ok = await asyncio.wait_for(small_box.run("print(6 * 7)"), 60)
    assert ok.stdout == "42\n", ok
    assert small_box._uids.qsize() == pool_size(small_box)


@ASYNC
async def test_every_uid_comes_back_after_each_kind_of_call(small_box: PythonSandbox) -> None:
    """After ok, failing, timed-out and orphaning calls the uid pool is full again."""
    for code in ("print(1)", "raise ValueError", "while True: pass", ORPHAN_WITH_CLOSED_PIPES):
        await small_box.run(code, timeout=1)
        assert small_box._uids.qsize() == pool_size(small_box)


@pytest.mark.parametrize(
    "code",
    [
        # many tiny files in the scratch dir
        "import os\nfor i in range(20000):\n    open(f'f{i}', 'w').write('x')\nprint(os.getuid())",
        # many memfds, held by the code and by forked children
        "import os\nfds = []\nfor i in range(200):\n"
        "    fd = os.memfd_create(f'm{i}')\n    os.write(fd, b'x' * (1 << 20))\n    fds.append(fd)\n"
        "for _ in range(4):\n    if os.fork() == 0:\n        import time\n        time.sleep(60)\n"
        "print(os.getuid())",
        # many threads and children sleeping at exit
        "import os, threading, time\nfor _ in range(20):\n"
        "    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
        "for _ in range(10):\n    if os.fork() == 0:\n        time.sleep(60)\n"
        "print(os.getuid())",
    ],
)
@ASYNC
async def test_a_call_returns_only_after_its_whole_tree_is_gone(sandbox: PythonSandbox, code: str) -> None:
    """Right after the call returns, no process of its uid is left and its cgroup is gone."""
    outcome = await sandbox.run(code, timeout=30)
    assert outcome.ok, outcome
    uid = int(outcome.stdout)
    assert uid_processes(uid) == []
    cgroups = sandbox._cgroups
    for entry in os.listdir(cgroups.root) if cgroups is not None else []:
        if entry.startswith(f"w{uid}-"):  # at most the init, exiting as root, is left
            with open(os.path.join(cgroups.root, entry, "cgroup.procs")) as f:  # noqa: ASYNC230
                assert not set(map(int, f.read().split())) & set(uid_processes(uid))


@ASYNC
async def test_a_timed_out_call_with_many_files_is_gone_when_it_returns(
    sandbox: PythonSandbox,
) -> None:
    """A call killed at its deadline while filling scratch leaves no process behind."""
    code = (
        "import os, sys\nprint(os.getuid(), flush=True)\ni = 0\n"
        "while True:\n    open(f'f{i % 50000}', 'w').write('x')\n    i += 1\n"
    )
    outcome = await sandbox.run(code, timeout=2)
    assert outcome.run_status == "Timeout"
    uid = int(outcome.stdout.split()[0])
    assert uid_processes(uid) == []


def test_cli_times_out_a_fake_done() -> None:
    """`apollo sandbox run` reports a Timeout, not success, for a fake "done"."""
    done = run_cli(FAKE_DONE, "--timeout", "2")
    assert done.returncode == 1, done.stderr
    payload = json.loads(done.stdout)
    assert payload["run_status"] == "Timeout"
    assert "Traceback" not in done.stderr


def test_cli_returns_after_orphans_are_gone() -> None:
    """`apollo sandbox run` of an orphaning snippet succeeds and leaves no process behind."""
    done = run_cli(ORPHAN_WITH_CLOSED_PIPES, "--timeout", "20")
    assert done.returncode == 0, done.stderr
    uid = int(json.loads(done.stdout)["result"])
    assert uid_processes(uid) == []


@ASYNC
async def test_a_uid_whose_processes_may_live_is_retired(small_box: PythonSandbox) -> None:
    """A worker not known to be gone gives back a fresh uid, never its own."""
    import socket

    from engine.sandbox.sandbox import _Worker

    uids = small_box._uids
    free = uids.qsize()
    uid = await uids.get()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    theirs.close()
    stuck = _Worker(-1, -1, -1, ours, -1, uid, {})
    small_box._release(stuck, gone=False)
    back = [uids.get_nowait() for _ in range(uids.qsize())]
    for value in back:
        uids.put_nowait(value)
    assert uid not in back
    assert len(back) == free


@ASYNC
async def test_the_init_frees_files_and_sysv_objects_before_reporting(
    sandbox: PythonSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The init's final report says it unmounted scratch and removed every SysV object."""
    from engine.sandbox import protocol, reports

    seen: list[dict] = []
    original = reports.exit_report

    def spy(message: bytes) -> reports.ExitReport | None:
        seen.append(protocol.unpack(message)[1])
        return original(message)

    monkeypatch.setattr(reports, "exit_report", spy)
    code = (
        "import ctypes\nlibc = ctypes.CDLL(None)\n"
        "for _ in range(3):\n    libc.shmget(0, 1 << 20, 0o1600)\n"
        "libc.semget(0, 2, 0o1600)\nlibc.msgget(0, 0o1600)\n"
        "for i in range(3000):\n    open(f'f{i}', 'w').write('x')\n"
    )
    outcome = await sandbox.run(code)
    assert outcome.ok, outcome
    final = [body for body in seen if body.get("reaped") is True]
    assert final and final[-1]["cleared"] == {"scratch": True, "sysv_objects": 5}
