"""Garbage input, the tool's JSON shapes, concurrency and configuration."""

from __future__ import annotations

import asyncio

import pytest
from conftest import as_json

from engine.sandbox import PythonSandbox, SandboxConfig, SandboxUnavailable
from engine.testing.harness import tool_options
from engine.tools.python_code import PythonCodeTool
from handlers.ports import ToolResult
from handlers.run_settings import RunSettingsError, run_settings_of

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_success_json_matches_the_reference_shape(sandbox: PythonSandbox) -> None:
    """Success: result, stderr, status, returncode in that order; score 1."""
    result = await PythonCodeTool(sandbox).run("print('hi')", tool_options())
    assert isinstance(result, ToolResult)
    assert result.score == 1
    assert result.text == '{"result": "hi\\n", "stderr": "", "status": "success", "returncode": 0}'


async def test_failure_json_matches_the_reference_shape(sandbox: PythonSandbox) -> None:
    """Failure: stderr as result plus run_status; score 0."""
    result = await PythonCodeTool(sandbox).run("raise ValueError('bad')", tool_options())
    payload = as_json(result.text)
    assert list(payload) == ["result", "stderr", "status", "returncode", "run_status"]
    assert payload["status"] == "failed" and payload["run_status"] == "Error"
    assert payload["result"] == payload["stderr"]
    assert payload["result"].endswith("ValueError: bad\n")
    assert result.score == 0


async def test_timeout_setting_is_honoured(sandbox: PythonSandbox) -> None:
    """settings['python_code_timeout'] bounds the call."""
    result = await PythonCodeTool(sandbox).run(
        "import time\ntime.sleep(30)", tool_options(python_code_timeout=1)
    )
    payload = as_json(result.text)
    assert payload["run_status"] == "Timeout"
    assert payload["result"] == "Code execution timed out after 1 seconds"


async def test_non_ascii_output_is_ascii_escaped(sandbox: PythonSandbox) -> None:
    """The text is json.dumps output, ASCII-escaped like the reference."""
    result = await PythonCodeTool(sandbox).run("print('π ≈ 3.14')", tool_options())
    assert result.text.isascii()
    assert as_json(result.text)["result"] == "π ≈ 3.14\n"


@pytest.mark.parametrize("code", ["", "   \n\t  "])
async def test_empty_code_gives_the_no_code_error(sandbox: PythonSandbox, code: str) -> None:
    """Blank code is the reference's 'No code provided.' error."""
    result = await PythonCodeTool(sandbox).run(code, tool_options())
    assert as_json(result.text) == {"result": "No code provided.", "status": "error"}
    assert result.score == 0


@pytest.mark.parametrize("garbage", [None, 42, b"print(1)", ["print(1)"], {"code": 1}])
async def test_non_string_input_is_an_error_observation(sandbox: PythonSandbox, garbage) -> None:
    """A non-string tool input becomes an error JSON, not a crash."""
    result = await PythonCodeTool(sandbox).run(garbage, tool_options())  # type: ignore[arg-type]
    payload = as_json(result.text)
    assert payload["status"] == "error"
    assert payload["result"].startswith("Exception during python_code execution:")


@pytest.mark.parametrize("value", [-1, 0, float("nan"), float("inf")])
async def test_bad_timeout_settings_fall_back_to_default(sandbox: PythonSandbox, value) -> None:
    """Unusable timeout numbers are ignored."""
    result = await PythonCodeTool(sandbox).run("print(1)", tool_options(python_code_timeout=value))
    assert result.score == 1


@pytest.mark.parametrize("value", ["abc", True, [3]])
async def test_timeouts_that_are_not_numbers_are_refused_where_settings_are_read(value) -> None:
    """A recorded timeout that is not a number never reaches the tool: decoding names the key."""
    with pytest.raises(RunSettingsError, match="python_code_timeout"):
        run_settings_of({"episode": {"python_code_timeout": value}})


async def test_disabled_python_gives_the_reference_message(sandbox: PythonSandbox) -> None:
    """enable_python_code=False answers 'not enabled' without running anything."""
    result = await PythonCodeTool(sandbox).run("print(1)", tool_options(enable_python_code=False))
    assert as_json(result.text)["status"] == "disabled"


async def test_sandbox_run_rejects_non_string(sandbox: PythonSandbox) -> None:
    """The sandbox API itself refuses non-str code with TypeError."""
    with pytest.raises(TypeError):
        await sandbox.run(b"print(1)")  # type: ignore[arg-type]


async def test_huge_code_is_refused_without_running(sandbox: PythonSandbox) -> None:
    """Code over the size limit fails with a clear message."""
    outcome = await sandbox.run("x = 1\n" * (sandbox.config.max_code_bytes // 4))
    assert not outcome.ok
    assert "Code too large" in outcome.stderr


async def test_large_code_under_the_limit_runs(sandbox: PythonSandbox) -> None:
    """Code bigger than a pipe buffer is delivered whole."""
    code = "x = 0\n" + "x += 1\n" * 50_000 + "print(x)"
    outcome = await sandbox.run(code)
    assert outcome.ok, outcome
    assert outcome.stdout == "50000\n"


@pytest.mark.parametrize("code", ["print(1)\x00", "\x00\x00", "print('\ud800')", "x = '\udcff'\n"])
async def test_nul_bytes_and_surrogates_fail_cleanly(sandbox: PythonSandbox, code: str) -> None:
    """NUL bytes and lone surrogates are reported as errors, and serving continues."""
    outcome = await sandbox.run(code)
    assert not outcome.ok
    assert outcome.stderr
    assert (await sandbox.run("print(1)")).ok


async def test_binary_junk_is_a_syntax_error(sandbox: PythonSandbox) -> None:
    """Random control characters are a syntax error, not a crash."""
    outcome = await sandbox.run("".join(chr(c) for c in range(1, 32)) * 10)
    assert not outcome.ok
    assert "Error" in outcome.stderr


async def test_deeply_nested_code_fails_cleanly(sandbox: PythonSandbox) -> None:
    """Pathological nesting is an error inside the worker, not in the host."""
    outcome = await sandbox.run("(" * 100_000 + ")" * 100_000)
    assert not outcome.ok
    assert (await sandbox.run("print(1)")).ok


async def test_parallel_calls_all_succeed(sandbox: PythonSandbox) -> None:
    """Many concurrent calls are queued by the bounded pool and all answered."""
    outcomes = await asyncio.gather(*(sandbox.run(f"print({i} ** 2)") for i in range(16)))
    assert [o.stdout for o in outcomes] == [f"{i**2}\n" for i in range(16)]


async def test_event_loop_keeps_running_during_calls(sandbox: PythonSandbox) -> None:
    """A slow snippet does not stop other coroutines from running."""
    ticks = 0

    async def heartbeat() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    beat = asyncio.ensure_future(heartbeat())
    await sandbox.run("import time\ntime.sleep(1)")
    beat.cancel()
    assert ticks > 5


async def test_missing_required_protection_fails_loudly() -> None:
    """A required protection that no worker applies makes start() raise."""
    box = PythonSandbox(SandboxConfig(required=("imaginary_protection",), spares=0))
    with pytest.raises(SandboxUnavailable, match="imaginary_protection"):
        await box.start()
    await box.close()


async def test_degraded_mode_must_be_explicit() -> None:
    """With allow_degraded the same configuration starts and runs code."""
    config = SandboxConfig(required=("imaginary_protection",), spares=0, allow_degraded=True)
    async with PythonSandbox(config) as box:
        assert box.protections()["network_namespace"] is True
        assert (await box.run("print(1)")).ok


async def test_unstarted_sandbox_refuses_to_run() -> None:
    """run() before start() is an error, not an unprotected execution."""
    from engine.sandbox import SandboxError

    with pytest.raises(SandboxError):
        await PythonSandbox().run("print(1)")


async def test_invalid_config_is_rejected() -> None:
    """Nonsensical pool settings fail at construction."""
    with pytest.raises(ValueError):
        SandboxConfig(timeout_s=0)
    with pytest.raises(ValueError):
        SandboxConfig(max_concurrency=0)


async def test_sandbox_recovers_when_the_fork_server_dies() -> None:
    """A killed fork server is restarted and calls keep being answered."""
    import os
    import signal

    async with PythonSandbox(SandboxConfig(spares=1)) as box:
        assert box._server is not None
        os.kill(box._server.pid, signal.SIGKILL)
        await box._server.wait()
        for _ in range(4):
            outcome = await box.run("print('alive')")
            assert outcome.stdout == "alive\n", outcome
