"""The fork server: a warm interpreter (numpy, scipy, sympy imported) that forks workers.

Started by the host with an empty environment and one AF_UNIX socket. It never runs user
code itself; it only forks on request, so its memory stays clean. It exits when the host
closes the socket (or dies).
"""

from __future__ import annotations

import gc
import json
import os
import signal
import socket
import sys

from engine.sandbox import protocol, syscalls
from engine.sandbox.worker import run_a

_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS")


def main(fd: int, project_root: str) -> None:
    """Warm up, say hello, then serve spawn requests until the host goes away."""
    for name in _THREAD_VARS:  # in-process only: /proc/<pid>/environ stays empty
        os.environ[name] = "1"
    syscalls.prctl(syscalls.PR_SET_PDEATHSIG, signal.SIGKILL)
    # deferred: the sandbox runner loads only once this fork server dies with its host
    from engine.sandbox.runner import build_namespace, warm_up

    warm_up()
    template = build_namespace()
    syscalls.libc()
    _hide_command_line()
    hidden = os.path.realpath(project_root)
    paths = [p for p in sys.path if p and os.path.realpath(p) != hidden]
    for name in _THREAD_VARS:
        del os.environ[name]
    gc.collect()
    gc.freeze()  # children never scan (and so never copy) the warm heap
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the A processes
    sock = socket.socket(fileno=fd)
    sock.send(protocol.pack(protocol.HELLO, {"pid": os.getpid(), "python": sys.version}))
    while True:
        try:
            message, fds, _flags, _addr = socket.recv_fds(sock, protocol.MAX_MESSAGE, 8)
        except InterruptedError:
            continue
        except OSError:
            break
        if not message:
            break
        try:
            request = json.loads(message)
            request["python_paths"] = paths + list(request.get("extra_python_paths", []))
            _spawn(request, fds, template)
        finally:
            for descriptor in fds:
                os.close(descriptor)
    os._exit(0)


def _hide_command_line(title: bytes = b"apollo-sandbox") -> None:
    """Overwrite this process's argv area, so a worker's ``/proc/1/cmdline`` shows only
    ``title`` instead of the interpreter's path and the project's install path."""
    import ctypes

    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rpartition(b")")[2].split()
        start, end = int(fields[45]), int(fields[46])  # arg_start, arg_end (fields 48, 49)
    except (OSError, ValueError, IndexError):
        return
    if end - start <= len(title):
        return
    ctypes.memset(start, 0, end - start)
    ctypes.memmove(start, title, len(title))
    libc = syscalls.libc()
    libc.prctl(15, ctypes.c_char_p(title[:15]), 0, 0, 0)  # PR_SET_NAME


def _spawn(request: dict, fds: list[int], template: dict) -> None:
    if len(fds) != 4:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        pid = os.fork()
    except OSError as exc:
        os.write(fds[2], f"fork server could not fork: {exc}\n".encode())
        return
    if pid == 0:
        try:
            run_a(request, fds, template)
        finally:
            os._exit(70)
