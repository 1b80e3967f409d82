"""Red team of the sandbox: each attack class that got through (or nearly) stays closed.

See the "Red team" table in docs/sandbox.md for what each attack did before and does now.
"""

from __future__ import annotations

import platform

import pytest
from conftest import assert_still_serving

from engine.sandbox import PythonSandbox, SandboxConfig, aio
from engine.sandbox.seccomp import _NUMBERS

pytestmark = pytest.mark.asyncio(loop_scope="module")

X86_64 = pytest.mark.skipif(platform.machine() != "x86_64", reason="x86-64 machine code")
DRIP_READS_BOUND = 2000
"""Reads of both output pipes allowed for a 3 s drip. Throttled: 256 free small reads, then at most 100 small
reads a second, each mostly followed by one full-pipe read (~850 measured). Unthrottled: one per byte or so (~10^6)."""
CALL_MACHINE_CODE = (
    "import ctypes, mmap\n"
    "def run(code):\n"
    "    buf = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)\n"
    "    buf.write(code)\n"
    "    address = ctypes.addressof(ctypes.c_char.from_buffer(buf))\n"
    "    return ctypes.CFUNCTYPE(ctypes.c_long)(address)()\n"
)


async def test_user_namespaces_are_refused_even_with_a_memory_cgroup(sandbox: PythonSandbox) -> None:
    """unshare/clone with CLONE_NEWUSER fail with EPERM, so no CAP_NET_ADMIN in a netns of its own."""
    code = (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.syscall.restype = ctypes.c_long\n"
        "print('unshare', libc.unshare(0x10000000 | 0x40000000), ctypes.get_errno())\n"
        f"pid = libc.syscall({_NUMBERS[platform.machine()]['clone']}, 0x10000000 | 17, 0, 0, 0, 0)\n"
        "if pid == 0:\n    os._exit(0)\n"
        "print('clone', pid, ctypes.get_errno())\n"
        "print('chroot', libc.chroot(b'/tmp'), ctypes.get_errno())\n"
        "child = os.fork()\nif child == 0:\n    os._exit(0)\n"
        "print('fork', os.waitpid(child, 0)[1])\n"
    )
    outcome = await sandbox.run(code)
    assert outcome.ok, outcome
    assert outcome.stdout.splitlines() == [
        "unshare -1 1",
        "clone -1 1",
        "chroot -1 1",
        "fork 0",
    ]


async def test_kernel_attack_surface_calls_are_refused(sandbox: PythonSandbox) -> None:
    """io_uring, userfaultfd, bpf and perf_event_open fail with EPERM in every call."""
    numbers = _NUMBERS[platform.machine()]
    calls = ("io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd", "bpf", "perf_event_open")
    code = (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.syscall.restype = ctypes.c_long\n"
        "buf = ctypes.create_string_buffer(256)\n"
        f"for name, number in {[(name, numbers[name]) for name in calls]!r}:\n"
        "    args = {'io_uring_setup': (8, buf), 'userfaultfd': (1,), 'bpf': (0, buf, 64),\n"
        "            'perf_event_open': (buf, 0, -1, -1, 0)}.get(name, (0, 0, 0, 0, 0, 0))\n"
        "    print(name, libc.syscall(number, *args), ctypes.get_errno())\n"
    )
    outcome = await sandbox.run(code)
    assert outcome.ok, outcome
    assert outcome.stdout.splitlines() == [f"{name} -1 1" for name in calls]


@X86_64
async def test_32_bit_and_x32_system_calls_cannot_bypass_seccomp(sandbox: PythonSandbox) -> None:
    """keyctl through int 0x80 (i386) or the x32 bit gets ENOSYS; native calls still work."""
    i386_keyctl = (
        "bytes([0x53, 0xB8]) + (288).to_bytes(4, 'little') + bytes([0x31, 0xDB, 0xB9])"
        " + (0xFFFFFFFC).to_bytes(4, 'little') + bytes([0xBA, 1, 0, 0, 0, 0xCD, 0x80, 0x5B, 0xC3])"
    )
    x32_keyctl = (
        "bytes([0x48, 0xC7, 0xC0]) + (0x40000000 | 250).to_bytes(4, 'little')"
        " + bytes([0x31, 0xFF, 0x48, 0xC7, 0xC6, 0xFC, 0xFF, 0xFF, 0xFF, 0xBA, 1, 0, 0, 0, 0x0F, 0x05, 0xC3])"
    )
    getpid = "bytes([0x48, 0xC7, 0xC0, 39, 0, 0, 0, 0x0F, 0x05, 0xC3])"
    code = CALL_MACHINE_CODE + f"print(run({i386_keyctl}), run({x32_keyctl}), run({getpid}))\n"
    outcome = await sandbox.run(code)
    assert outcome.ok, outcome
    assert outcome.stdout.split() == ["-38", "-38", "2"]


async def test_runaway_recursion_ends_as_a_recursion_error_not_a_timeout(sandbox: PythonSandbox) -> None:
    """600,000 frames give Python's short traceback at once, not minutes of formatting."""
    code = (
        "def f(n):\n    return f(n + 1) + 1\n"
        "try:\n    f(0)\n"
        "except RecursionError as exc:\n    raise ValueError('wrapped') from exc\n"
    )
    outcome = await sandbox.run(code, timeout=30)
    assert outcome.killed_for is None, outcome.stderr
    assert outcome.run_status == "Error"
    assert "RecursionError: maximum recursion depth exceeded" in outcome.stderr
    assert "ValueError: wrapped" in outcome.stderr
    assert "  [Previous line repeated 5999" in outcome.stderr
    assert outcome.stderr.count("return f(n + 1) + 1") == 3
    assert not outcome.stderr_truncated
    await assert_still_serving(sandbox)


async def test_runaway_mutual_recursion_keeps_both_ends_of_the_traceback(sandbox: PythonSandbox) -> None:
    """Frames that never repeat in a row are cut to the first and last hundred, with a note."""
    code = "def f(n):\n    return g(n) + 1\ndef g(n):\n    return f(n) + 1\nf(0)\n"
    outcome = await sandbox.run(code, timeout=30)
    assert outcome.killed_for is None, outcome.stderr
    assert "RecursionError: maximum recursion depth exceeded" in outcome.stderr
    assert "more frames not shown ...]" in outcome.stderr
    assert 190 <= outcome.stderr.count('File "<string>"') <= 200  # the runner's own frames are dropped
    assert not outcome.stderr_truncated


async def test_short_tracebacks_are_unchanged(sandbox: PythonSandbox) -> None:
    """A 50-deep recursion error still prints like Python: three frames then a repeat note."""
    code = "def f(n):\n    return 1 / n if n == 0 else f(n - 1)\nf(50)\n"
    outcome = await sandbox.run(code)
    assert "ZeroDivisionError" in outcome.stderr
    assert "[Previous line repeated 48 more times]" in outcome.stderr
    assert "more frames not shown" not in outcome.stderr


async def test_a_byte_at_a_time_writer_costs_the_host_few_reads(
    sandbox: PythonSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Millions of 1-byte writes over 3 s cost the host a few hundred reads of the pipes, not one per byte."""
    reads = 0
    read_some = aio.read_some

    async def counting_read_some(fd: int, size: int = 1 << 16) -> bytes:
        nonlocal reads
        reads += 1
        return await read_some(fd, size)

    # Counted, not timed (shared machines): one call per chunk the engine's drain takes from a pipe;
    # _drain looks aio.read_some up on each read, so patching the module attribute sees them all.
    monkeypatch.setattr(aio, "read_some", counting_read_some)
    code = "import os, time\nend = time.monotonic() + 3\nwhile time.monotonic() < end:\n    os.write(1, b'x')\n"
    outcome = await sandbox.run(code, timeout=10)
    assert outcome.ok, outcome
    assert outcome.stdout.startswith("x" * 1000)
    assert reads < DRIP_READS_BOUND, f"the host read the pipes {reads} times for a 3 s drip"


async def test_an_inode_flood_stops_at_the_scratch_cap(sandbox: PythonSandbox) -> None:
    """Creating empty directories ends with ENOSPC at scratch_inodes, quickly, not at the timeout."""
    code = (
        "import os\nn = 0\n"
        "try:\n    while True:\n        os.mkdir(f'd{n}')\n        n += 1\n"
        "except OSError as exc:\n    print(n, exc.errno)\n"
    )
    outcome = await sandbox.run(code, timeout=10)
    assert outcome.ok, outcome
    made, errno = map(int, outcome.stdout.split())
    assert errno == 28
    assert made <= SandboxConfig().scratch_inodes


async def test_host_scheduling_limits_are_not_inherited(sandbox: PythonSandbox) -> None:
    """RLIMIT_RTPRIO and RLIMIT_NICE are 0 whatever the host's: no SCHED_FIFO, no negative nice."""
    code = (
        "import os, resource\n"
        "print(resource.getrlimit(resource.RLIMIT_RTPRIO), resource.getrlimit(resource.RLIMIT_NICE))\n"
        "for attempt in (lambda: os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1)),\n"
        "                lambda: os.nice(-1)):\n"
        "    try:\n        attempt()\n        print('granted')\n"
        "    except PermissionError:\n        print('refused')\n"
    )
    outcome = await sandbox.run(code)
    assert outcome.ok, outcome
    assert outcome.stdout.splitlines() == ["(0, 0) (0, 0)", "refused", "refused"]


async def test_python_level_tampering_does_not_reach_the_next_call(sandbox: PythonSandbox) -> None:
    """Patched builtins, modules, cwd, umask, files, threads and daemons are gone for the next call."""
    plant = (
        "import builtins, json, os, sys, threading, time\n"
        "builtins.print = lambda *a, **k: sys.stdout.write('HACKED\\n')\n"
        "json.dumps = lambda *a, **k: 'HACKED'\n"
        "sys.modules['math'] = None\n"
        "open('/tmp/planted', 'w').write('x')\n"
        "os.umask(0)\nos.chdir('/')\n"
        "threading.Thread(target=time.sleep, args=(100,), daemon=True).start()\n"
        "if os.fork() == 0:\n    os.setsid()\n    time.sleep(100)\n"
        "sys.stdout.write('planted\\n')\n"
    )
    check = (
        "import json, math, os\n"
        "print(json.dumps([math.floor(1.5)]), os.path.exists('/tmp/planted'), os.getcwd(),"
        " oct(os.umask(0o22)), sorted(d for d in os.listdir('/proc') if d.isdigit()))\n"
    )
    planted = await sandbox.run(plant)
    assert planted.ok and planted.stdout.startswith("planted"), planted
    checked = await sandbox.run(check)
    assert checked.ok, checked
    assert checked.stdout == "[1] False /tmp 0o22 ['1', '2']\n"


async def test_the_init_cannot_be_reached_for_its_status_channel(sandbox: PythonSandbox) -> None:
    """pidfd_getfd, ptrace and /proc/1/fd on the init (which holds the status socket) all fail."""
    code = (
        "import ctypes, os, sys\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.syscall.restype = ctypes.c_long\n"
        "pidfd = os.pidfd_open(1)\n"
        "print('getfd', libc.syscall(438, pidfd, 3, 0), ctypes.get_errno())\n"
        "print('ptrace', libc.ptrace(16, 1, 0, 0), ctypes.get_errno())\n"
        "for path in ('/proc/1/fd/3', '/proc/1/mem', '/proc/1/environ'):\n"
        "    try:\n        open(path, 'rb').read(1)\n        print('opened', path)\n"
        "    except PermissionError:\n        print('denied', path)\n"
        "sys.stdout.flush()\nos._exit(3)\n"
    )
    outcome = await sandbox.run(code)
    assert outcome.returncode == 3, outcome
    assert outcome.stdout.splitlines() == [
        "getfd -1 1",
        "ptrace -1 1",
        "denied /proc/1/fd/3",
        "denied /proc/1/mem",
        "denied /proc/1/environ",
    ]
