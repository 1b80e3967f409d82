"""Garbage on the status channel (fd 3) never crashes the host: bounded, strict decoding."""

from __future__ import annotations

import asyncio
import json
import os
import socket

import pytest
from conftest import assert_still_serving, run_cli

from engine.sandbox import PythonSandbox, protocol, reports
from engine.testing.harness import tool_options
from engine.tools.python_code import PythonCodeTool
from handlers.ports import ToolError

ASYNC = pytest.mark.asyncio(loop_scope="module")

GARBAGE = [
    b'D{"returncode": Infinity, "cpu_s": 0}',
    b'S{"status": Infinity, "cpu_s": 0}',
    b'S{"status": NaN, "cpu_s": NaN}',
    b'S{"status": -Infinity}',
    b'S{"status": 1099511627776, "cpu_s": 0}',
    b'S{"status": -1, "cpu_s": 0}',
    b'S{"status": 4991, "cpu_s": 0}',  # a "stopped" wait status, not an exit
    b'S{"status": true, "cpu_s": 0}',
    b'S{"status": "0", "cpu_s": 0}',
    b'S{"status": 0, "cpu_s": 1e999}',
    b'S{"status": 0, "cpu_s": ' + b"9" * 5000 + b"}",
    b'S{"status": ' + b"1" * 5000 + b"}",
    b"D" + b"[" * 60000,
    b"S" + b"{" * 60000,
    b'S{"a": ' + b"[" * 50 + b"]" * 50 + b', "status": 0}',
    b"S" + b"\xff\xfe\xfa" * 100,
    b'S{"status": 0, "cpu_s": "\xed\xa0\x80"}',
    b'S{"status": 0',
    b"S",
    b"S[0]",
    b'S"text"',
    b"S" + b" " * 70000,
    b"\x00" * 10,
    bytes(range(256)),
]
"""Messages an attacker who knows the protocol might write to the status channel."""

WRITE_GARBAGE = f"""
import os, socket
payloads = {GARBAGE!r}
for fd in range(3, 64):
    for data in payloads:
        try:
            os.write(fd, data)
        except OSError:
            pass
        try:
            s = socket.socket(fileno=os.dup(fd))
            s.send(data)
            s.detach()
        except OSError:
            pass
print("done")
"""


@pytest.mark.parametrize("message", GARBAGE)
def test_unpack_turns_garbage_into_a_garbage_tag(message: bytes) -> None:
    """protocol.unpack never raises; odd messages are tagged GARBAGE or keep a dict body."""
    tag, body = protocol.unpack(message)
    assert isinstance(body, dict)
    assert tag in (protocol.GARBAGE, message[:1])


@pytest.mark.parametrize("message", GARBAGE)
def test_exit_report_rejects_garbage(message: bytes) -> None:
    """No garbage message yields an exit report (huge, non-finite, deep, non-UTF-8, cut)."""
    report = reports.exit_report(message)
    assert report is None or (report.returncode == 0 and report.cpu_s == 0.0)


def test_exit_report_reads_a_real_status() -> None:
    """The init's own message is understood: exit codes, signals, CPU seconds."""
    ok = reports.exit_report(protocol.pack(protocol.STATUS, {"status": 3 << 8, "cpu_s": 0.5}))
    assert ok == reports.ExitReport(returncode=3, cpu_s=0.5)
    killed = reports.exit_report(protocol.pack(protocol.STATUS, {"status": 9, "cpu_s": 1}))
    assert killed is not None and killed.returncode == -9


def test_unpack_refuses_oversized_messages() -> None:
    """A message over the size bound is garbage without being parsed."""
    big = protocol.STATUS + json.dumps({"status": 0, "pad": "x" * protocol.MAX_MESSAGE}).encode()
    assert protocol.unpack(big) == (protocol.GARBAGE, {})


@ASYNC
async def test_collect_closes_passed_fds_and_survives_truncation() -> None:
    """Fds passed on the channel are closed at once; oversized datagrams are dropped."""
    host, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    host.setblocking(False)
    before = len(os.listdir("/proc/self/fd"))
    try:
        for _ in range(20):
            r, w = os.pipe()
            socket.send_fds(peer, [b'S{"status": 0}'], [r, w])
            os.close(r)
            os.close(w)
        peer.send(b"S" + b"[" * (1 << 17))  # longer than the host's receive buffer
        peer.send(protocol.pack(protocol.STATUS, {"status": 7 << 8, "cpu_s": 0.25}))
        peer.close()
        report = await asyncio.wait_for(reports.collect(host), 10)
    finally:
        host.close()
    assert report == reports.ExitReport(returncode=7, cpu_s=0.25)
    assert len(os.listdir("/proc/self/fd")) <= before - 1


@ASYNC
async def test_collect_bounds_a_flood() -> None:
    """A flood of messages is read to its end without decoding past the bound."""
    host, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    host.setblocking(False)

    async def flood() -> None:
        peer.setblocking(False)
        for _ in range(reports.MAX_MESSAGES * 20):
            while True:
                try:
                    peer.send(b'S{"status": 256}')
                    break
                except BlockingIOError:
                    await asyncio.sleep(0.001)
        peer.close()

    try:
        sender = asyncio.ensure_future(flood())
        report = await asyncio.wait_for(reports.collect(host), 30)
        await sender
    finally:
        host.close()
    assert report == reports.ExitReport(returncode=1)


@ASYNC
async def test_garbage_written_to_fd_3_does_not_crash_a_call(sandbox: PythonSandbox) -> None:
    """Code writing every garbage message to fd 3 (and other fds) gets its normal result."""
    outcome = await sandbox.run(WRITE_GARBAGE, timeout=20)
    assert outcome.ok, outcome
    assert outcome.stdout.endswith("done\n")
    await assert_still_serving(sandbox)


@ASYNC
async def test_fd_3_is_not_the_status_channel_inside_the_call(sandbox: PythonSandbox) -> None:
    """The code holds no socket at all: the channel was closed before it ran."""
    code = (
        "import os, stat\n"
        "kinds = []\n"
        "for fd in range(0, 256):\n"
        "    try:\n"
        "        kinds.append(stat.S_ISSOCK(os.fstat(fd).st_mode))\n"
        "    except OSError:\n"
        "        pass\n"
        "print(any(kinds))\n"
    )
    outcome = await sandbox.run(code)
    assert outcome.ok, outcome
    assert outcome.stdout == "False\n"


@ASYNC
async def test_python_code_tool_returns_a_result_for_garbage_writers(
    sandbox: PythonSandbox,
) -> None:
    """The engine's tool renders a normal result, not an exception, for a garbage writer."""
    result = await PythonCodeTool(sandbox).run(WRITE_GARBAGE, tool_options(python_code_timeout=20))
    assert json.loads(result.text)["status"] == "success"


class _Exploding:
    def __init__(self, error: BaseException) -> None:
        self.error = error

    async def run(self, code: str, timeout: float | None = None) -> None:
        raise self.error


@ASYNC
@pytest.mark.parametrize("error", [OverflowError("cannot convert float infinity"), RecursionError(), KeyError("x")])
async def test_python_code_turns_any_sandbox_exception_into_a_tool_failure(
    error: BaseException,
) -> None:
    """Whatever the sandbox raises, python_code raises ToolError(kind='sandbox') only."""
    tool = PythonCodeTool(_Exploding(error))  # type: ignore[arg-type]
    with pytest.raises(ToolError) as raised:
        await tool.run("print(1)", tool_options())
    assert raised.value.kind == "sandbox"


def test_cli_prints_json_for_a_garbage_writer() -> None:
    """`apollo sandbox run` prints the tool JSON and no traceback for a garbage writer."""
    done = run_cli(WRITE_GARBAGE, "--timeout", "20")
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"].endswith("done\n")
