"""Model-written code cannot escape: network, files, secrets, processes, resources."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest
from conftest import SECRET_NAME, SECRET_VALUE, assert_still_serving

from engine.sandbox import PythonSandbox

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_dunder_import_socket_cannot_reach_nats_port(sandbox: PythonSandbox) -> None:
    """__import__("socket") connecting to 127.0.0.1:4222 fails: no network at all."""
    code = (
        's = __import__("socket").socket()\n'
        "s.settimeout(2)\n"
        's.connect(("127.0.0.1", 4222))\n'
        'print("connected")\n'
    )
    outcome = await sandbox.run(code)
    assert not outcome.ok
    assert "connected" not in outcome.stdout
    assert "OSError" in outcome.stderr or "Error" in outcome.stderr
    await assert_still_serving(sandbox)


async def test_cannot_connect_to_a_listening_host_socket(sandbox: PythonSandbox) -> None:
    """A socket the test itself listens on (loopback) is unreachable and gets no connection."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    try:
        code = (
            "import socket\n"
            f"for host in ('127.0.0.1', 'localhost', '0.0.0.0'):\n"
            "    try:\n"
            f"        socket.create_connection((host, {port}), timeout=2)\n"
            "        print('connected', host)\n"
            "    except OSError as exc:\n"
            "        print('blocked', host, type(exc).__name__)\n"
        )
        outcome = await sandbox.run(code)
        assert outcome.ok, outcome
        assert "connected" not in outcome.stdout
        assert outcome.stdout.count("blocked") == 3
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()


async def test_no_network_interfaces_except_a_down_loopback(sandbox: PythonSandbox) -> None:
    """The worker's network namespace has nothing routable."""
    code = "import socket\nprint(sorted(n for _, n in socket.if_nameindex()))"
    outcome = await sandbox.run(code)
    assert outcome.ok, outcome
    assert outcome.stdout.strip() == "['lo']"


async def test_os_system_cannot_touch_host_files(sandbox: PythonSandbox, tmp_path: Path) -> None:
    """os.system runs, but only inside the sandbox: the host directory stays untouched."""
    marker = tmp_path / "pwned"
    code = f"import os\nprint(os.system('echo pwned > {marker}; id -u'))"
    await sandbox.run(code)
    assert not marker.exists()
    await assert_still_serving(sandbox)


async def test_subprocess_through_importlib_is_contained(
    sandbox: PythonSandbox, tmp_path: Path
) -> None:
    """importlib-loaded subprocess cannot read secrets or write host files."""
    marker = tmp_path / "from-subprocess"
    code = (
        "import importlib\n"
        "sp = importlib.import_module('sub' + 'process')\n"
        "r = sp.run(['cat', '/etc/shadow'], capture_output=True, text=True)\n"
        "print('shadow:', r.returncode, r.stdout[:20])\n"
        f"sp.run(['sh', '-c', 'touch {marker}'])\n"
    )
    outcome = await sandbox.run(code)
    assert "root:" not in outcome.stdout
    assert not marker.exists()
    await assert_still_serving(sandbox)


async def test_ctypes_cannot_regain_privileges(sandbox: PythonSandbox) -> None:
    """ctypes calls to setuid(0), unshare and mount fail for the unprivileged worker."""
    code = (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "print(libc.setuid(0), libc.unshare(0x00020000), os.getuid() != 0)\n"
        "print(libc.mount(b'none', b'/tmp', b'tmpfs', 0, None))\n"
    )
    outcome = await sandbox.run(code)
    assert outcome.ok, outcome
    assert outcome.stdout.split() == ["-1", "-1", "True", "-1"]


async def test_etc_shadow_is_unreadable(sandbox: PythonSandbox) -> None:
    """/etc/shadow does not exist in the worker's view."""
    outcome = await sandbox.run("print(open('/etc/shadow').read())")
    assert not outcome.ok
    assert "root:" not in outcome.stdout
    assert "FileNotFoundError" in outcome.stderr or "PermissionError" in outcome.stderr


async def test_project_and_home_files_are_invisible(sandbox: PythonSandbox) -> None:
    """Nothing of /work, /root or home directories is readable except Python's own files."""
    code = (
        "import os\n"
        f"for p in ({str(REPO / 'pyproject.toml')!r}, '/root/.bashrc',"
        f" {str(REPO.parent / 'shared' / 'DESIGN.md')!r}):\n"
        "    print(p, os.path.exists(p))\n"
        f"print(sorted(os.listdir({str(REPO)!r})) if os.path.isdir({str(REPO)!r}) else ['<absent>'])\n"
        "print(os.path.exists('/home'))\n"
    )
    outcome = await sandbox.run(code)
    assert outcome.ok, outcome
    assert " True" not in outcome.stdout.split("[")[0]
    # Only the virtualenv (Python's own files) may show; a checkout under /tmp is hidden
    # entirely by the private scratch /tmp.
    assert "['.venv']" in outcome.stdout or "['<absent>']" in outcome.stdout
    assert outcome.stdout.rstrip().endswith("False")


async def test_planted_secret_does_not_leak(sandbox: PythonSandbox) -> None:
    """A secret in the host's environment is in no environment the code can read."""
    code = (
        "import os, glob\n"
        "print(dict(os.environ))\n"
        "for path in ['/proc/self/environ', *glob.glob('/proc/*/environ')]:\n"
        "    try:\n"
        "        print(path, open(path, 'rb').read())\n"
        "    except OSError as exc:\n"
        "        print(path, type(exc).__name__)\n"
    )
    outcome = await sandbox.run(code)
    assert outcome.ok, outcome
    assert SECRET_VALUE not in outcome.stdout + outcome.stderr
    assert SECRET_NAME not in outcome.stdout + outcome.stderr
    assert "{}" in outcome.stdout


async def test_proc_1_environ_holds_nothing(sandbox: PythonSandbox) -> None:
    """PID 1 is the worker's own init: its environment is empty or unreadable."""
    code = "print(repr(open('/proc/1/environ', 'rb').read()))"
    outcome = await sandbox.run(code)
    assert SECRET_VALUE not in outcome.stdout + outcome.stderr
    assert outcome.stdout.strip() == "b''" or "PermissionError" in outcome.stderr


async def test_host_processes_are_invisible(sandbox: PythonSandbox) -> None:
    """Only the worker's own namespace shows in /proc."""
    code = "import os\nprint(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))"
    outcome = await sandbox.run(code)
    assert outcome.ok, outcome
    assert outcome.stdout.strip() == "[1, 2]"


@pytest.mark.parametrize(
    "path", [str(Path(__file__).resolve().parents[2] / "evil.txt"), "/etc/evil", "/usr/evil", "/evil", "/dev/shm/evil"]
)
async def test_writing_outside_scratch_fails(sandbox: PythonSandbox, path: str) -> None:
    """Every path outside the scratch directory is read-only or absent."""
    outcome = await sandbox.run(f"open({path!r}, 'w').write('x')")
    assert not outcome.ok
    assert "Error" in outcome.stderr
    assert not os.path.exists(path)  # noqa: ASYNC240 - a one-off check in a test


async def test_writing_host_tmp_is_impossible(sandbox: PythonSandbox, tmp_path: Path) -> None:
    """The worker's /tmp is its own tmpfs; the host's tmp directory stays clean."""
    target = tmp_path / "escaped.txt"
    outcome = await sandbox.run(f"open({str(target)!r}, 'w').write('x')")
    assert not outcome.ok
    assert not target.exists()


async def test_scratch_directory_is_writable_and_private(sandbox: PythonSandbox) -> None:
    """The working directory is a writable scratch dir, empty at every call."""
    write = (
        "import os\nprint(os.getcwd(), os.listdir('.'))\n"
        "with open('note.txt', 'w') as f:\n    f.write('hi')"
    )
    first = await sandbox.run(write)
    second = await sandbox.run(write)
    assert first.ok and second.ok, (first, second)
    assert first.stdout == second.stdout == "/tmp []\n"


async def test_fork_bomb_is_contained(sandbox: PythonSandbox) -> None:
    """A fork bomb hits the per-call process limit and dies with the call."""
    code = "import os\nwhile True:\n    os.fork()\n"
    outcome = await sandbox.run(code, timeout=5)
    assert not outcome.ok
    await assert_still_serving(sandbox)
    check = await sandbox.run(
        "import os\nprint(len([p for p in os.listdir('/proc') if p.isdigit()]))"
    )
    assert check.stdout.strip() == "2"


async def test_memory_bomb_raises_memory_error(sandbox: PythonSandbox) -> None:
    """Allocating far beyond the memory limit fails inside the worker."""
    outcome = await sandbox.run("x = bytearray(64 * 1024**3)")
    assert not outcome.ok
    assert "MemoryError" in outcome.stderr
    growing = await sandbox.run("chunks = []\nwhile True:\n    chunks.append(bytearray(10**8))")
    assert not growing.ok
    assert "MemoryError" in growing.stderr
    await assert_still_serving(sandbox)


async def test_infinite_loop_times_out(sandbox: PythonSandbox) -> None:
    """A busy loop is killed at the timeout and reported like the reference."""
    outcome = await sandbox.run("while True:\n    pass", timeout=1)
    assert outcome.run_status == "Timeout"
    assert outcome.returncode == -1
    assert outcome.stderr == "Code execution timed out after 1 seconds"
    await assert_still_serving(sandbox)


async def test_unbounded_output_is_capped_and_marked(sandbox: PythonSandbox) -> None:
    """Endless printing is cut, marked as truncated, and the worker is killed."""
    outcome = await sandbox.run("while True:\n    print('x' * 1000)", timeout=8)
    assert not outcome.ok
    assert outcome.killed_for == "output"
    assert outcome.stdout_truncated
    assert "[output truncated:" in outcome.stdout
    assert len(outcome.stdout) < 2 * sandbox.config.max_output_bytes
    assert "Output limit exceeded" in outcome.stderr
    await assert_still_serving(sandbox)


async def test_ignoring_sigterm_does_not_survive_timeout(sandbox: PythonSandbox) -> None:
    """Ignoring SIGTERM changes nothing: the whole namespace is SIGKILLed."""
    code = (
        "import signal, time, os\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "if os.fork() == 0:\n"
        "    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "while True:\n"
        "    time.sleep(0.05)\n"
    )
    outcome = await sandbox.run(code, timeout=1)
    assert outcome.run_status == "Timeout"
    await assert_still_serving(sandbox)


async def test_killing_the_parent_is_contained(sandbox: PythonSandbox) -> None:
    """os.kill(os.getppid(), 9) and kill(-1, 9) cannot hurt the sandbox or the host."""
    code = (
        "import os\n"
        "try:\n"
        "    os.kill(os.getppid(), 9)\n"
        "except OSError as exc:\n"
        "    print(type(exc).__name__)\n"
        "print('still here')\n"
    )
    outcome = await sandbox.run(code)
    assert outcome.ok, outcome
    assert "still here" in outcome.stdout
    await sandbox.run("import os, signal\nos.kill(-1, signal.SIGKILL)")
    await assert_still_serving(sandbox)


async def test_background_children_die_with_the_call(sandbox: PythonSandbox) -> None:
    """A daemonised child does not outlive its call."""
    code = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    time.sleep(600)\n"
        "print('parent done')\n"
    )
    outcome = await sandbox.run(code, timeout=5)
    assert outcome.ok, outcome
    assert outcome.stdout == "parent done\n"
    await assert_still_serving(sandbox)


async def test_pid_1_command_line_hides_the_install_path(sandbox: PythonSandbox) -> None:
    """/proc/1/cmdline and the code's own show a neutral title, not the interpreter's path."""
    code = (
        "for path in ('/proc/1/cmdline', '/proc/self/cmdline'):\n"
        "    try:\n"
        "        print(open(path, 'rb').read().rstrip(b'\\0'))\n"
        "    except OSError as exc:\n"
        "        print(type(exc).__name__)\n"
    )
    outcome = await sandbox.run(code)
    assert outcome.ok, outcome
    assert str(REPO) not in outcome.stdout
    assert "python" not in outcome.stdout.lower()
    assert outcome.stdout.splitlines()[0] == "b'apollo-sandbox'"


async def test_mountinfo_shows_only_the_view(sandbox: PythonSandbox) -> None:
    """Every mount the code can see is part of the documented view (nothing else of the host)."""
    code = "print('\\n'.join(line.split()[4] for line in open('/proc/self/mountinfo')))"
    outcome = await sandbox.run(code)
    assert outcome.ok, outcome
    allowed_prefixes = ("/usr", "/lib", "/bin", "/sbin", "/etc/", "/dev/", "/tmp", "/proc")
    python_paths = {p for p in sys.path if p}
    for point in outcome.stdout.split():
        assert point == "/" or point.startswith(allowed_prefixes) or any(
            point == p or point.startswith(p + "/") for p in python_paths
        ), point
