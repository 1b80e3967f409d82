"""``PythonSandbox``: the asyncio front of the fork server and its pool of workers.

Each call gets a fresh worker process (forked ahead of time, already isolated) that runs one
snippet and dies with everything it started. The host owns the call's life: it ends when the
worker's whole process tree is gone (never on a message), or is killed at the deadline.
Nothing here blocks the event loop: pipes and sockets are non-blocking and driven by the
loop's readers and writers.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
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

from engine.sandbox import aio, memcap, protocol, reports
from engine.sandbox.config import UID_BLOCK, SandboxConfig, default_uid_base
from engine.sandbox.errors import SandboxError, SandboxUnavailable, WorkerFailed
from engine.sandbox.outcome import ERROR, FINISHED, TIMEOUT, SandboxOutcome
from engine.sandbox.reports import ExitReport

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
    cgroup: str | None = None
    """Its memory cgroup (host path), if the machine gives one."""
    closed: bool = False

    def alive(self) -> bool:
        """False once the worker's init has exited (its pidfd turns readable)."""
        poller = select.poll()
        poller.register(self.pidfd, select.POLLIN)
        return not poller.poll(0)

    def kill(self) -> None:
        """SIGKILL the init (the whole PID namespace dies) and anything in its cgroup."""
        if self.pidfd >= 0:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
        if self.cgroup is not None:
            with contextlib.suppress(OSError, ValueError):
                with open(os.path.join(self.cgroup, "cgroup.procs")) as f:
                    pids = [int(line) for line in f if line.strip()]
                for pid in pids:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)

    def close(self, keep_pidfd: bool = False) -> None:
        if self.closed:
            return
        self.closed = True
        for fd in (self.code_w, self.out_r, self.err_r, -1 if keep_pidfd else self.pidfd):
            if fd >= 0:
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
        self._finishing: set[asyncio.Task[Any]] = set()
        self._protections: dict[str, Any] = {}
        self._spare_uids: collections.deque[int] = collections.deque()
        self._cgroups: memcap.CallCgroups | None = None
        self._cgroup_reason = "disabled by configuration"
        self._cgroup_names = itertools.count()
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
        pool = cfg.max_concurrency + cfg.spares + 2
        for uid in range(base, base + pool):
            self._uids.put_nowait(uid)
        self._spare_uids = collections.deque(range(base + pool, base + UID_BLOCK))
        self._slots = asyncio.Semaphore(cfg.max_concurrency)
        self._restart_lock = asyncio.Lock()
        if cfg.memory_cgroup:
            self._cgroups, self._cgroup_reason = memcap.detect()
        await self._start_server()
        worker = await self._spawn()
        self._spares.append(worker)
        self._refill()

    async def close(self) -> None:
        """Kill spare workers and stop the fork server."""
        self._closed = True
        pending = list(self._tasks)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)  # they may hand workers back
        while self._spares:
            worker = self._spares.popleft()
            self._finish_later(worker)
        deadline = time.monotonic() + 2 * self.config.reap_grace_s
        while self._finishing and time.monotonic() < deadline:  # releases may add removals
            await asyncio.wait(list(self._finishing), timeout=deadline - time.monotonic())
        await self._stop_server()
        if self._cgroups is not None:
            self._cgroups.close()

    async def run(
        self,
        code: str,
        timeout: float | None = None,  # the sandboxed code's limit, not ours
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
            message = f"Code too large: {len(data)} bytes (the limit is {self.config.max_code_bytes} bytes)."
            return SandboxOutcome(stdout="", stderr=message, returncode=-1, run_status=ERROR)
        async with self._slots:
            worker = await self._take_worker()
            self._refill()
            try:
                return await self._execute(worker, data, limit)
            except Exception as exc:
                self._finish_later(worker)
                raise WorkerFailed(f"the sandbox failed during the call: {exc!r}") from exc
            except BaseException:
                self._finish_later(worker)
                raise

    async def _take_worker(self) -> _Worker:
        """A live spare, or a freshly spawned worker (spares die with their fork server)."""
        while self._spares:
            worker = self._spares.popleft()
            server = worker.server
            if worker.alive() and server is not None and server.returncode is None:
                return worker
            self._finish_later(worker)
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
            self._finish_later(worker)
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
        try:
            cgroup = self._make_cgroup(uid)
        except BaseException:
            self._uids.put_nowait(uid)
            raise
        code_r, code_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        status, child_status = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        request = {
            "uid": uid,
            "scratch_bytes": self.config.scratch_bytes,
            "scratch_inodes": self.config.scratch_inodes,
            "fallback_scratch": "/tmp",
            "landlock": self.config.landlock,
            "extra_python_paths": list(self.config.extra_python_paths),
            "cgroup": cgroup,
            "cgroup_reason": self._cgroup_reason,
            "memory_cap_bytes": self.config.call_memory_bytes,
        }
        worker = _Worker(code_w, out_r, err_r, status, -1, uid, {}, server=self._server, cgroup=cgroup)
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
            self._finish_later(worker)
            raise
        try:
            self._check(worker.applied)
        except SandboxError:
            self._finish_later(worker)
            raise
        return worker

    def _make_cgroup(self, uid: int) -> str | None:
        if self._cgroups is None:
            return None
        name = f"w{uid}-{next(self._cgroup_names)}"
        try:
            return self._cgroups.create(name, self.config.call_memory_bytes)
        except OSError as exc:
            self._cgroup_reason = f"failed: {exc.strerror or exc}"
            return None

    async def _handshake(self, worker: _Worker) -> None:
        """Collect the init's pidfd (from A) and READY (from D), which may come in any order."""
        applied: dict[str, Any] | None = None
        while worker.pidfd < 0 or applied is None:
            message, fds = await aio.recv_msg(worker.status, max_fds=1)
            tag, body = protocol.unpack(message)
            if tag == protocol.PIDFD and fds and worker.pidfd < 0:
                worker.pidfd = fds.pop()
            elif tag == protocol.READY and isinstance(body.get("applied"), dict):
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
        missing = {name: applied.get(name, "unknown") for name in self.config.required if applied.get(name) is not True}
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
                "realtime_priority": 0,  # never the host's: no SCHED_FIFO/RR busy loop
                "nice_ceiling": 0,  # no raising of its own priority
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
        report_task = asyncio.ensure_future(reports.collect(worker.status))
        try:
            gone = await self._until_gone(worker, [report_task, *readers], limit)
            if not gone and not killed:
                killed.append("timeout")
            if not gone:
                worker.kill()
                gone = await self._until_gone(worker, [report_task, *readers], cfg.reap_grace_s)
        finally:
            writer.cancel()
            for task in (report_task, *readers):
                task.cancel()
        report = report_task.result() if report_task.done() and not report_task.cancelled() else None
        oom = worker.cgroup is not None and memcap.oom_kills(worker.cgroup) > 0
        self._release(worker, gone)
        duration = time.monotonic() - started
        return _outcome(out, err, report, killed, limit, duration, worker.applied, oom)

    async def _until_gone(self, worker: _Worker, tasks: list[Any], timeout: float) -> bool:
        """Wait up to ``timeout`` for every process that ran the code to be gone: the init
        reported that it killed and reaped them all (or the status channel ended, so the
        init and its parent exited), and every holder of the output pipes closed them."""
        _done, pending = await asyncio.wait(tasks, timeout=timeout)
        return not pending

    async def _send_code(self, worker: _Worker, payload: bytes) -> None:
        try:
            await aio.write_all(worker.code_w, payload)
        finally:
            with contextlib.suppress(OSError):
                os.close(worker.code_w)
            worker.code_w = -1

    async def _finish(self, worker: _Worker) -> None:
        """After a kill: wait (bounded) until the worker's tree is gone, then release it."""
        if worker.code_w >= 0:  # a worker still waiting for code then ends on its own
            with contextlib.suppress(OSError):
                os.close(worker.code_w)
            worker.code_w = -1
        tasks = [asyncio.ensure_future(reports.collect(worker.status))]
        gone = False
        try:
            gone = await self._until_gone(worker, tasks, self.config.reap_grace_s)
        finally:  # cancelled too: close the fds; the uid is retired unless known free
            tasks[0].cancel()
            self._release(worker, gone)

    def _release(self, worker: _Worker, gone: bool) -> None:
        """Close the worker's fds, remove its cgroup and give its uid back.

        A uid whose processes may still live (they survived the kill and the grace period)
        is never handed out again: the pool gets a fresh uid from the block instead.
        """
        assert self._uids is not None
        if worker.closed:
            return
        cgroup = worker.cgroup
        if cgroup is not None and not memcap.remove(cgroup):
            # the init may still be exiting (or, if not gone, anything else in it)
            worker.close(keep_pidfd=True)
            self._track(self._remove_cgroup_later(cgroup, worker))
        else:
            worker.close()
        if gone or not self._spare_uids:
            self._uids.put_nowait(worker.uid)
        else:
            self._uids.put_nowait(self._spare_uids.popleft())

    async def _remove_cgroup_later(self, cgroup: str, worker: _Worker) -> None:
        """Remove a call's cgroup once its init has exited (killing what is left in it)."""
        pidfd, worker.pidfd = worker.pidfd, -1
        try:
            if pidfd >= 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(aio.readable(pidfd), self.config.reap_grace_s)
            for _ in range(100):
                if memcap.remove(cgroup):
                    return
                worker.kill()  # only its cgroup now: nothing of a later call is in it
                await asyncio.sleep(0.02)
        finally:
            if pidfd >= 0:
                os.close(pidfd)

    def _detach(self, coro: Any) -> None:
        """Run ``coro`` in the background (cancelled by :meth:`close`)."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _finish_later(self, worker: _Worker) -> None:
        """Kill ``worker`` and release it in the background (:meth:`close` waits for it)."""
        worker.kill()
        self._track(self._finish(worker))

    def _track(self, coro: Any) -> None:
        """Run a clean-up in the background; :meth:`close` waits for it (bounded)."""
        task = asyncio.ensure_future(coro)
        self._finishing.add(task)
        task.add_done_callback(self._finishing.discard)


DRIP_CHUNK = 4096
"""A read shorter than this is a small one (the pipe held little)."""
DRIP_FREE_READS = 256
"""Small reads per stream served at once; after that each waits :data:`DRIP_PAUSE_S`."""
DRIP_PAUSE_S = 0.01


async def _drain(fd: int, capture: _Capture, on_output: Any) -> None:
    """Read a stream to its end. Code that writes a byte at a time would otherwise wake
    the event loop once per byte (a core of the engine's time per call): after
    :data:`DRIP_FREE_READS` small reads, each waits a little, so the pipe fills meanwhile
    and the writer blocks instead (at most 100 reads a second per stream)."""
    small = 0
    while chunk := await aio.read_some(fd):
        capture.add(chunk)
        on_output()
        if len(chunk) < DRIP_CHUNK:
            small += 1
            if small > DRIP_FREE_READS:
                await asyncio.sleep(DRIP_PAUSE_S)


def _outcome(
    out: _Capture,
    err: _Capture,
    report: ExitReport | None,
    killed: list[str],
    limit: float,
    duration: float,
    applied: dict[str, Any],
    oom: bool = False,
) -> SandboxOutcome:
    stdout, out_cut = out.text()
    stderr, err_cut = err.text()
    if oom:
        stderr = _append(stderr, "Memory limit exceeded: the call's processes were killed.")
    common = {
        "duration_s": duration,
        "cpu_s": report.cpu_s if report is not None else 0.0,
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
        note = f"Output limit exceeded: the process was killed after writing more than {out.total + err.total} bytes."
        return SandboxOutcome(
            stdout=stdout,
            stderr=_append(stderr, note),
            returncode=-9,
            run_status=ERROR,
            killed_for="output",
            **common,
        )
    if report is None:
        note = "The worker ended unexpectedly."
        return SandboxOutcome(stdout=stdout, stderr=_append(stderr, note), returncode=-9, run_status=ERROR, **common)
    code = report.returncode
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


def _append(text: str, note: str) -> str:
    if text and not text.endswith("\n"):
        text += "\n"
    return f"{text}{note}\n"
