"""The three processes behind one call, forked from the warm fork server.

``A`` (outside) enters new namespaces and forks ``C``, the init of the new PID namespace,
which builds the file-system view and forks ``D``, the worker that drops privileges, waits
for the code and runs it. When ``D`` ends, ``C`` reports its status and exits, which makes
the kernel kill everything left in the namespace. Each step records what it applied so the
host can refuse a worker that is less protected than required.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import os
import resource
import signal
import socket
import sys
from typing import Any

from engine.sandbox import fsview, landlock, memcap, protocol, seccomp, teardown
from engine.sandbox import syscalls as sc

CODE_FD, OUT_FD, ERR_FD, STATUS_FD = 0, 1, 2, 3
_NAMESPACES = {
    "pid_namespace": sc.CLONE_NEWPID,
    "network_namespace": sc.CLONE_NEWNET,
    "mount_namespace": sc.CLONE_NEWNS,
    "ipc_uts_namespace": sc.CLONE_NEWIPC | sc.CLONE_NEWUTS,
}


def run_a(request: dict[str, Any], fds: list[int], template: dict[str, Any]) -> None:
    """Process A: namespaces, fork the init, hand its pidfd to the host, wait, exit."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    sc.prctl(sc.PR_SET_PDEATHSIG, signal.SIGKILL)
    for target, fd in enumerate(fds):
        os.dup2(fd, target + 10)
    for target in range(len(fds)):
        os.dup2(target + 10, target)
    os.closerange(len(fds), 1 << 20)
    status = socket.socket(fileno=STATUS_FD)
    applied: dict[str, Any] = {}
    try:
        sc.unshare(sum(_NAMESPACES.values()))
        applied.update(dict.fromkeys(_NAMESPACES, True))
    except OSError:
        for name, flag in _NAMESPACES.items():
            try:
                sc.unshare(flag)
                applied[name] = True
            except OSError as exc:
                applied[name] = f"unavailable: {exc.strerror}"
    child = os.fork()
    if child == 0:
        _guard(status, lambda: run_c(request, applied, status, template))
    os.close(CODE_FD)
    os.close(OUT_FD)
    os.close(ERR_FD)
    pidfd = os.pidfd_open(child)
    socket.send_fds(status, [protocol.pack(protocol.PIDFD, {"pid": child})], [pidfd])
    os.close(pidfd)
    os.waitpid(child, 0)
    os._exit(0)


def run_c(
    request: dict[str, Any],
    applied: dict[str, Any],
    status: socket.socket,
    template: dict[str, Any],
) -> None:
    """Process C, the namespace's init: file-system view, fork D, reap, report D's status."""
    sc.prctl(sc.PR_SET_PDEATHSIG, signal.SIGKILL)
    in_pid_ns = applied.get("pid_namespace") is True and os.getpid() == 1
    applied["memory_cgroup"] = _join_cgroup(request)
    applied["ipc_limits"] = _limit_ipc(request, applied.get("ipc_uts_namespace") is True)
    if applied.get("mount_namespace") is True:
        try:
            fsview.build(
                request["python_paths"],
                request["uid"],
                request["scratch_bytes"],
                scratch_inodes=int(request.get("scratch_inodes") or 0),
                mount_proc=in_pid_ns,
            )
            applied["filesystem_view"] = True
        except OSError as exc:
            applied["filesystem_view"] = f"failed: {exc}"
    else:
        applied["filesystem_view"] = "unavailable: no mount namespace"
    if applied.get("ipc_uts_namespace") is True:
        socket.sethostname("sandbox")
    child = os.fork()
    if child == 0:
        _guard(status, lambda: run_d(request, applied, status, template))
    for fd in (CODE_FD, OUT_FD, ERR_FD):
        os.close(fd)
    while True:
        try:
            pid, wait_status, usage = os.wait4(-1, 0)
        except ChildProcessError:
            break
        if pid == child:
            body = {
                "status": wait_status,
                "cpu_s": usage.ru_utime + usage.ru_stime,
                "max_rss_kb": usage.ru_maxrss,
                "reaped": in_pid_ns and _kill_and_reap_namespace(),
            }
            if body["reaped"]:
                body["cleared"] = _clear(applied)
            with contextlib.suppress(OSError):
                status.send(protocol.pack(protocol.STATUS, body), socket.MSG_DONTWAIT)
            break
    if not in_pid_ns:
        _kill_group(child)
    os._exit(0)


def _clear(applied: dict[str, Any]) -> dict[str, Any]:
    """Free the call's files and SysV objects now, not at this init's (slow) exit."""
    cleared: dict[str, Any] = {}
    if applied.get("filesystem_view") is True:
        cleared["scratch"] = teardown.clear_scratch()
    if applied.get("ipc_uts_namespace") is True:
        cleared["sysv_objects"] = teardown.clear_sysv_ipc()
    return cleared


def _kill_and_reap_namespace() -> bool:
    """As the namespace's init: SIGKILL every other process in it and reap them all.

    Once this returns True no process that ran the code is left (orphans are re-parented to
    this init before their parent is reaped), so the host need not wait for this init's
    own, slower, exit (tearing down the warm interpreter's address space).
    """
    with contextlib.suppress(OSError):
        os.kill(-1, signal.SIGKILL)
    while True:
        try:
            os.wait4(-1, 0)
        except ChildProcessError:
            return True
        except InterruptedError:
            continue


def run_d(
    request: dict[str, Any],
    applied: dict[str, Any],
    status: socket.socket,
    template: dict[str, Any],
) -> None:
    """Process D: drop everything, say ready, read the code, apply limits, run it."""
    os.setsid()
    os.environ.clear()
    applied["empty_environment"] = not os.environ and _initial_environ_empty()
    uid = request["uid"]
    if os.geteuid() == 0:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    applied["unprivileged_user"] = True if os.geteuid() != 0 else "unavailable: still root"
    sc.prctl(sc.PR_SET_PDEATHSIG, signal.SIGKILL)
    try:
        sc.prctl(sc.PR_SET_NO_NEW_PRIVS, 1)
        applied["no_new_privs"] = True
    except OSError as exc:
        applied["no_new_privs"] = f"failed: {exc.strerror}"
    applied["landlock"] = _landlock(request, applied.get("filesystem_view") is True)
    applied["seccomp"] = _seccomp(applied)
    if applied.get("filesystem_view") is not True:
        os.chdir(request["fallback_scratch"])
    applied["scratch_dir"] = os.getcwd()
    sys.path[:] = [p for p in request["python_paths"] if p]
    status.send(protocol.pack(protocol.READY, {"applied": applied}))
    status.close()  # the code never holds the channel the host reads its exit status from
    header, code = _read_code()
    if header is None:
        os._exit(0)
    _apply_limits(header)
    _reseed()
    sys.stdin = io.TextIOWrapper(io.FileIO(CODE_FD, "r", closefd=False), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(
        io.FileIO(OUT_FD, "w", closefd=False),
        encoding="utf-8",
        errors="backslashreplace",
        write_through=False,
    )
    sys.stderr = io.TextIOWrapper(
        io.FileIO(ERR_FD, "w", closefd=False),
        encoding="utf-8",
        errors="backslashreplace",
        line_buffering=True,
    )
    sys.__stdout__, sys.__stderr__, sys.__stdin__ = sys.stdout, sys.stderr, sys.stdin
    # deferred: the sandbox runner, loaded by the fork server (zygote.main) only, never by the host
    from engine.sandbox.runner import execute

    atexit._clear()  # the fork server's exit handlers are not the user's
    code_rc = execute(code, template)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code_rc)


def _join_cgroup(request: dict[str, Any]) -> bool | str:
    """Put this init (and so everything it forks) in the call's memory cgroup."""
    path = request.get("cgroup")
    if not path:
        return request.get("cgroup_reason") or "unavailable"
    try:
        memcap.join(path)
    except OSError as exc:
        return f"failed: {exc.strerror or exc}"
    return True


def _limit_ipc(request: dict[str, Any], own_namespace: bool) -> bool | str:
    """Cap System V shared memory and message queues in the call's own IPC namespace."""
    if not own_namespace:
        return "unavailable: no IPC namespace"
    cap = int(request["memory_cap_bytes"])
    settings = {
        "kernel/shmmax": cap,
        "kernel/shmall": max(1, cap // resource.getpagesize()),
        "kernel/msgmni": 64,
    }
    try:
        for name, value in settings.items():
            with open(f"/proc/sys/{name}", "w") as f:
                f.write(str(value))
    except OSError as exc:
        return f"failed: {exc.strerror or exc}"
    return True


def _seccomp(applied: dict[str, Any]) -> bool | str:
    """Refuse keyrings, new user namespaces and other kernel attack surface always; SysV
    IPC without an IPC namespace; memfds without a memory cgroup (see
    engine/sandbox/seccomp.py)."""
    refused = seccomp.KEYRINGS
    if applied.get("ipc_uts_namespace") is not True:
        refused += seccomp.SYSV_IPC
    if applied.get("memory_cgroup") is not True:
        refused += seccomp.UNCAPPED_MEMORY
    if applied.get("no_new_privs") is not True:
        return "unavailable: needs no_new_privs"
    return seccomp.install(refused + seccomp.KERNEL_SURFACE, refuse_user_namespaces=True)


def _landlock(request: dict[str, Any], own_root: bool) -> bool | str:
    if not request.get("landlock", True):
        return "disabled by configuration"
    scratch = fsview.SCRATCH if own_root else request["fallback_scratch"]
    try:
        abi = landlock.restrict(read_paths=["/"], write_paths=[scratch, "/dev/null", "/dev/zero", "/dev/full"])
    except OSError as exc:
        return f"failed: {exc.strerror}"
    return True if abi > 0 else "unavailable: kernel without landlock"


def _initial_environ_empty() -> bool:
    """Checked while still able to read it: after the uid switch the process is non-dumpable."""
    try:
        with open("/proc/self/environ", "rb") as f:
            return f.read() == b""
    except OSError:
        return False


def _read_code() -> tuple[dict[str, Any] | None, str]:
    chunks: list[bytes] = []
    while True:
        chunk = os.read(CODE_FD, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    data = b"".join(chunks)
    if not data:
        return None, ""
    head, _, body = data.partition(b"\n")
    return json.loads(head), body.decode("utf-8", "surrogatepass")


def _apply_limits(header: dict[str, Any]) -> None:
    limits = header["limits"]
    table = {
        "cpu_seconds": resource.RLIMIT_CPU,
        "address_space_bytes": resource.RLIMIT_AS,
        "file_size_bytes": resource.RLIMIT_FSIZE,
        "open_files": resource.RLIMIT_NOFILE,
        "processes": resource.RLIMIT_NPROC,
        "core_bytes": resource.RLIMIT_CORE,
        "realtime_priority": resource.RLIMIT_RTPRIO,
        "nice_ceiling": resource.RLIMIT_NICE,
    }
    for key, which in table.items():
        value = int(limits[key])
        hard = value + 1 if key == "cpu_seconds" else value
        resource.setrlimit(which, (value, hard))


def _reseed() -> None:
    """Forked children share the parent's random state; give each call fresh entropy."""
    import random

    random.seed()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()


def _kill_group(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)


def _guard(status: socket.socket, step: Any) -> None:
    """Run a child step; any failure is reported to the host and the child exits."""
    try:
        step()
    except BaseException as exc:  # noqa: BLE001 - any failure of a child step is reported, then the child exits
        with contextlib.suppress(OSError):
            status.send(protocol.pack(protocol.FAILED, {"error": f"{type(exc).__name__}: {exc}"}))
    finally:
        os._exit(70)
