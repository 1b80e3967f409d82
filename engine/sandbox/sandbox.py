"""``PythonSandbox``: the asyncio front of the fork server and its pool of workers.

Each call gets a fresh worker process (forked ahead of time, already isolated) that runs one
snippet and dies with everything it started. Nothing here blocks the event loop: pipes and
sockets are non-blocking and driven by the loop's readers and writers.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import select
import signal
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.sandbox import aio, protocol
from engine.sandbox.config import SandboxConfig, default_uid_base
from engine.sandbox.errors import SandboxError, SandboxUnavailable, WorkerFailed
from engine.sandbox.outcome import ERROR, FINISHED, TIMEOUT, SandboxOutcome

_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from engine.sandbox.zygote import main; main(int(sys.argv[2]), sys.argv[1])"
)
_PROJECT_ROOT = str(Path(__file__).resolve().parents[2])
_SIGNAL_NOTES = {
    signal.SIGXCPU: "CPU time limit exceeded",
    signal.SIGSEGV: "Segmentation fault (stack overflow or a crashing extension)",
    signal.SIGKILL: "Process killed",
    signal.SIGXFSZ: "File size limit exceeded",
    signal.SIGABRT: "Aborted",
}


@dataclass
class _Worker:
    code_w: int
    out_r: int
    err_r: int
    status: socket.socket
    pidfd: int
    uid: int
    applied: dict[str, Any]
    server: Any = None
    """The fork-server process it came from: workers die with it (parent-death signal)."""
    closed: bool = False

    def alive(self) -> bool:
        """False once the worker's init has exited (its pidfd turns readable)."""
        poller = select.poll()
        poller.register(self.pidfd, select.POLLIN)
        return not poller.poll(0)

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for fd in (self.code_w, self.out_r, self.err_r, self.pidfd):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.status.close()


@dataclass
class _Capture:
    limit: int
    chunks: list[bytes] = field(default_factory=list)
    kept: int = 0
    total: int = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.limit - self.kept
        if room > 0:
            self.chunks.append(data[:room])
            self.kept += min(room, len(data))

    def text(self) -> tuple[str, bool]:
        text = b"".join(self.chunks).decode("utf-8", "replace")
        dropped = self.total - self.kept
        if dropped > 0:
            return f"{text}\n... [output truncated: {dropped} more bytes not shown]\n", True
        return text, False


class PythonSandbox:
    """Runs untrusted Python snippets, one fresh isolated process per call."""

    def __init__(self, config: SandboxConfig | None = None) -> None:
        self.config = config or SandboxConfig()
        self._server: asyncio.subprocess.Process | None = None
        self._server_sock: socket.socket | None = None
        self._server_errors: collections.deque[bytes] = collections.deque(maxlen=50)
        self._spares: collections.deque[_Worker] = collections.deque()
        self._spawning = 0
        self._uids: asyncio.Queue[int] | None = None
        self._slots: asyncio.Semaphore | None = None
        self._restart_lock: asyncio.Lock | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._protections: dict[str, Any] = {}
        self._closed = False

    async def __aenter__(self) -> PythonSandbox:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def protections(self) -> dict[str, bool | str]:
        """What the last prepared worker actually applied (empty before :meth:`start`)."""
        return dict(self._protections)

    async def start(self) -> None:
        """Start the fork server, prepare one worker and check its protections."""
        cfg = self.config
        self._uids = asyncio.Queue()
        base = cfg.uid_base if cfg.uid_base is not None else default_uid_base()
        for uid in range(base, base + cfg.max_concurrency + cfg.spares + 2):
            self._uids.put_nowait(uid)
        self._slots = asyncio.Semaphore(cfg.max_concurrency)
        self._restart_lock = asyncio.Lock()
        await self._start_server()
        worker = await self._spawn()
        self._spares.append(worker)
        self._refill()

    async def close(self) -> None:
        """Kill spare workers and stop the fork server."""
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        while self._spares:
            worker = self._spares.popleft()
            worker.kill()
            worker.close()
        await self._stop_server()

    async def run(
        self,
        code: str,
        timeout: float | None = None,  # noqa: ASYNC109 - the sandboxed code's limit, not ours
    ) -> SandboxOutcome:
        """Run ``code`` in a fresh worker and report what it printed and how it ended."""
        if not isinstance(code, str):
            raise TypeError(f"code must be str, not {type(code).__name__}")
        if self._slots is None or self._closed:
            raise SandboxError("the sandbox is not started")
        limit = self.config.timeout_s if timeout is None else float(timeout)
        if not limit > 0:
            raise ValueError("timeout must be positive")
        data = code.encode("utf-8", "surrogatepass")
        if len(data) > self.config.max_code_bytes:
            message = (
                f"Code too large: {len(data)} bytes "
                f"(the limit is {self.config.max_code_bytes} bytes)."
            )
            return SandboxOutcome(stdout="", stderr=message, returncode=-1, run_status=ERROR)
        async with self._slots:
            worker = await self._take_worker()
            self._refill()
            try:
                return await self._execute(worker, data, limit)
            finally:
                self._detach(self._reap(worker))

    async def _take_worker(self) -> _Worker:
        """A live spare, or a freshly spawned worker (spares die with their fork server)."""
        while self._spares:
            worker = self._spares.popleft()
            server = worker.server
            if worker.alive() and server is not None and server.returncode is None:
                return worker
            self._detach(self._reap(worker))
        return await self._spawn()

    # -- fork server -------------------------------------------------------------------

    async def _start_server(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._server = await asyncio.create_subprocess_exec(
                self.config.python or sys.executable,
                "-I",
                "-c",
                _BOOT,
                _PROJECT_ROOT,
                str(theirs.fileno()),
                pass_fds=(theirs.fileno(),),
                env={},
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        finally:
            theirs.close()
        ours.setblocking(False)
        self._server_sock = ours
        self._detach(self._collect_server_errors(self._server))
        try:
            message, _ = await asyncio.wait_for(aio.recv_msg(ours), self.config.start_timeout_s)
        except TimeoutError:
            message = b""
        if protocol.unpack(message)[0] != protocol.HELLO:
            await self._stop_server()
            detail = b"".join(self._server_errors).decode("utf-8", "replace")[-2000:]
            raise SandboxUnavailable(f"the sandbox fork server did not start: {detail}")

    async def _collect_server_errors(self, server: asyncio.subprocess.Process) -> None:
        assert server.stderr is not None
        while line := await server.stderr.readline():
            self._server_errors.append(line)

    async def _stop_server(self) -> None:
        if self._server_sock is not None:
            self._server_sock.close()
            self._server_sock = None
        server, self._server = self._server, None
        if server is not None and server.returncode is None:
            try:
                await asyncio.wait_for(server.wait(), 5)
            except TimeoutError:
                server.kill()
                await server.wait()

    async def _restart_server(self, broken: asyncio.subprocess.Process | None) -> None:
        assert self._restart_lock is not None
        async with self._restart_lock:
            if self._server is broken and not self._closed:
                await self._stop_server()
                await self._start_server()

    # -- workers -----------------------------------------------------------------------

    def _refill(self) -> None:
        missing = self.config.spares - len(self._spares) - self._spawning
        for _ in range(max(0, missing)):
            self._detach(self._spawn_spare())

    async def _spawn_spare(self) -> None:
        self._spawning += 1
        try:
            worker = await self._spawn()
        except (SandboxError, OSError):
            return
        finally:
            self._spawning -= 1
        if self._closed:
            worker.kill()
            worker.close()
        else:
            self._spares.append(worker)

    async def _spawn(self) -> _Worker:
        for attempt in (1, 2):
            server = self._server
            try:
                return await self._spawn_once()
            except WorkerFailed:
                if attempt == 2 or server is None or server.returncode is None:
                    raise
                await self._restart_server(server)
        raise AssertionError("unreachable")

    async def _spawn_once(self) -> _Worker:
        assert self._uids is not None
        if self._server_sock is None:
            raise WorkerFailed("the fork server is not running")
        uid = await self._uids.get()
        code_r, code_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        status, child_status = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        request = {
            "uid": uid,
            "scratch_bytes": self.config.scratch_bytes,
            "fallback_scratch": "/tmp",
            "landlock": self.config.landlock,
            "extra_python_paths": list(self.config.extra_python_paths),
        }
        worker = _Worker(code_w, out_r, err_r, status, -1, uid, {}, server=self._server)
        try:
            try:
                await aio.send_msg(
                    self._server_sock,
                    json.dumps(request).encode(),
                    [code_r, out_w, err_w, child_status.fileno()],
                )
            except OSError as exc:
                raise WorkerFailed(f"the fork server is gone: {exc}") from exc
            finally:
                for fd in (code_r, out_w, err_w):
                    os.close(fd)
                child_status.close()
            for fd in (code_w, out_r, err_r):
                os.set_blocking(fd, False)
            status.setblocking(False)
            await asyncio.wait_for(self._handshake(worker), self.config.start_timeout_s)
        except BaseException:
            worker.kill()
            worker.close()
            self._uids.put_nowait(uid)
            raise
        self._check(worker.applied)
        return worker

    async def _handshake(self, worker: _Worker) -> None:
        """Collect the init's pidfd (from A) and READY (from D), which may come in any order."""
        applied: dict[str, Any] | None = None
        while worker.pidfd < 0 or applied is None:
            message, fds = await aio.recv_msg(worker.status, max_fds=1)
            tag, body = protocol.unpack(message)
            if tag == protocol.PIDFD and fds and worker.pidfd < 0:
                worker.pidfd = fds.pop()
            elif tag == protocol.READY:
                applied = body["applied"]
            else:
                detail = body.get("error") or "the worker ended during set-up"
                raise WorkerFailed(f"sandbox worker failed: {detail}")
            for fd in fds:
                os.close(fd)
        worker.applied = {**applied, "rlimits": True}
        self._protections = dict(worker.applied)

    def _check(self, applied: dict[str, Any]) -> None:
        if self.config.allow_degraded:
            return
        missing = {
            name: applied.get(name, "unknown")
            for name in self.config.required
            if applied.get(name) is not True
        }
        if missing:
            detail = ", ".join(f"{k} ({v})" for k, v in missing.items())
            raise SandboxUnavailable(
                f"required sandbox protections are unavailable: {detail}; "
                "run as root on Linux, or allow degraded mode explicitly"
            )

    async def _execute(self, worker: _Worker, data: bytes, limit: float) -> SandboxOutcome:
        cfg = self.config
        header = {
            "limits": {
                "cpu_seconds": int(limit + cfg.cpu_grace_s) + 1,
                "address_space_bytes": cfg.memory_bytes,
                "file_size_bytes": cfg.file_size_bytes,
                "open_files": cfg.open_files,
                "processes": cfg.processes,
                "core_bytes": 0,
            }
        }
        payload = json.dumps(header).encode() + b"\n" + data
        out, err = _Capture(cfg.max_output_bytes), _Capture(cfg.max_output_bytes)
        killed: list[str] = []

        def on_output() -> None:
            if out.total + err.total > cfg.kill_output_bytes and not killed:
                killed.append("output")
                worker.kill()

        started = time.monotonic()
        writer = asyncio.ensure_future(self._send_code(worker, payload))
        readers = [
            asyncio.ensure_future(_drain(worker.out_r, out, on_output)),
            asyncio.ensure_future(_drain(worker.err_r, err, on_output)),
        ]
        status_body: dict[str, Any] = {}
        try:
            message, _ = await asyncio.wait_for(aio.recv_msg(worker.status), limit)
            status_body = _exit_report(message)
        except TimeoutError:
            if not killed:
                killed.append("timeout")
            worker.kill()
        finally:
            writer.cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*readers), 10)
        for task in readers:
            task.cancel()
        duration = time.monotonic() - started
        return _outcome(out, err, status_body, killed, limit, duration, worker.applied)

    async def _send_code(self, worker: _Worker, payload: bytes) -> None:
        try:
            await aio.write_all(worker.code_w, payload)
        finally:
            with contextlib.suppress(OSError):
                os.close(worker.code_w)
            worker.code_w = -1

    async def _reap(self, worker: _Worker) -> None:
        """Wait until the worker's whole namespace is gone, then free its uid."""
        assert self._uids is not None
        try:
            while True:
                message, _ = await asyncio.wait_for(aio.recv_msg(worker.status), 30)
                if not message:
                    break
        except (TimeoutError, OSError):
            worker.kill()
        finally:
            worker.close()
            self._uids.put_nowait(worker.uid)

    def _detach(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


async def _drain(fd: int, capture: _Capture, on_output: Any) -> None:
    while chunk := await aio.read_some(fd):
        capture.add(chunk)
        on_output()


def _outcome(
    out: _Capture,
    err: _Capture,
    status: dict[str, Any],
    killed: list[str],
    limit: float,
    duration: float,
    applied: dict[str, Any],
) -> SandboxOutcome:
    stdout, out_cut = out.text()
    stderr, err_cut = err.text()
    common = {
        "duration_s": duration,
        "cpu_s": float(status.get("cpu_s", 0.0)),
        "stdout_truncated": out_cut,
        "stderr_truncated": err_cut,
        "protections": dict(applied),
    }
    if killed and killed[0] == "timeout":
        message = f"Code execution timed out after {limit:g} seconds"
        return SandboxOutcome(
            stdout=stdout,
            stderr=message,
            returncode=-1,
            run_status=TIMEOUT,
            killed_for="timeout",
            **common,
        )
    if killed:
        note = (
            f"Output limit exceeded: the process was killed after writing more than "
            f"{out.total + err.total} bytes."
        )
        return SandboxOutcome(
            stdout=stdout,
            stderr=_append(stderr, note),
            returncode=-9,
            run_status=ERROR,
            killed_for="output",
            **common,
        )
    code = status.get("returncode")
    if not isinstance(code, int):
        note = "The worker ended unexpectedly."
        return SandboxOutcome(
            stdout=stdout, stderr=_append(stderr, note), returncode=-9, run_status=ERROR, **common
        )
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        note = _SIGNAL_NOTES.get(-code, "Process killed")
        stderr = _append(stderr, f"{note} ({name}).")
    return SandboxOutcome(
        stdout=stdout,
        stderr=stderr,
        returncode=code,
        run_status=FINISHED if code == 0 else ERROR,
        **common,
    )


def _exit_report(message: bytes) -> dict[str, Any]:
    """``returncode`` and ``cpu_s`` from a DONE or STATUS message; ``{}`` for anything else."""
    try:
        tag, body = protocol.unpack(message)
        if tag == protocol.DONE:
            return {"returncode": int(body["returncode"]), "cpu_s": float(body["cpu_s"])}
        if tag == protocol.STATUS:
            return {
                "returncode": os.waitstatus_to_exitcode(int(body["status"])),
                "cpu_s": float(body["cpu_s"]),
            }
    except (ValueError, KeyError, TypeError):
        pass
    return {}


def _append(text: str, note: str) -> str:
    if text and not text.endswith("\n"):
        text += "\n"
    return f"{text}{note}\n"
