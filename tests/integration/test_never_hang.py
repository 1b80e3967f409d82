"""Commands never hang and never leave a mess (issue 25 §1), checked on real `apollo` processes.

Each process runs in its own session so a test can signal its whole process group, as a
terminal does on Ctrl-C or when it closes. Only outcomes are asserted (the command ended,
what it printed, what is left running); subprocess timeouts are generous bounds, never
the thing measured.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import pytest

from engine.models.fake_server import FakeOpenAIServer
from engine.nats.server import free_port
from engine.runtime.engine_state import STATE_FILE
from engine.runtime.processes import running

pytestmark = [pytest.mark.nats, pytest.mark.slow, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "scripted" / "demo.json"
GSM8K = ROOT.parent / "shared" / "data" / "gsm8k.jsonl"
BOUND_S = 120.0
"""How long any command here may take before the test calls it a hang."""


def _env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("APOLLO_")}
    return {**env, "APOLLO_DATA_DIR": str(data_dir), "APOLLO_MODEL": f"scripted:{DEMO}", **extra}


def _as_a_foreground_job() -> None:
    """What a shell gives a foreground command: Ctrl-C neither blocked nor ignored. The test
    process may hold SIGINT blocked for a moment (the grading pool does while it starts), and a
    child inherits its signal mask; a user's command never starts that way."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGHUP, signal.SIGTERM})
    signal.signal(signal.SIGINT, signal.default_int_handler)


async def _start(args: list[str], env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "engine", *args, env=env, cwd=ROOT, start_new_session=True,
        preexec_fn=_as_a_foreground_job,  # the test's own child
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )


async def _apollo(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    """Run one command to its end (a hang fails the test); returns code, stdout, stderr."""
    process = await _start(args, env)
    try:
        out, err = await asyncio.wait_for(process.communicate(), BOUND_S)
    except TimeoutError:
        os.killpg(process.pid, signal.SIGKILL)
        raise AssertionError(f"apollo {' '.join(args)} did not end within {BOUND_S:g} s") from None
    return process.returncode, out.decode(errors="replace"), err.decode(errors="replace")


async def _read_until(stream: asyncio.StreamReader, marker: str, seen: list[str]) -> None:
    """Read lines into ``seen`` until one contains ``marker``."""
    while True:
        line = await asyncio.wait_for(stream.readline(), BOUND_S)
        assert line, f"output ended before {marker!r}: {''.join(seen)[-2000:]}"
        seen.append(line.decode(errors="replace"))
        if marker in seen[-1]:
            return


async def _finish(process: asyncio.subprocess.Process, seen: list[str]) -> tuple[int, str]:
    """Wait for a signalled process to end; returns its code and all its stderr."""
    _, rest = await asyncio.wait_for(process.communicate(), BOUND_S)
    return process.returncode, "".join(seen) + rest.decode(errors="replace")


def _assert_quiet(stderr: str) -> None:
    """No traceback, no interrupted pool worker, no leaked-semaphore warning."""
    for noise in ("Traceback", "KeyboardInterrupt", "leaked semaphore", "ForkServerProcess"):
        assert noise not in stderr, stderr[-3000:]


DEAD_URL_COMMANDS = [
    ["runs"],
    ["submit", "What is 1+1?"],
    ["show", "run-1"],
    ["solve", "What is 1+1?"],
    ["run", "--dataset", str(GSM8K), "--limit", "2", "--no-probe"],
    ["worker"],
    ["up"],
]


@pytest.mark.parametrize("command", DEAD_URL_COMMANDS, ids=lambda c: c[0])
async def test_a_dead_nats_url_ends_the_command_with_one_line_naming_it(command: list[str], tmp_path) -> None:
    """Every command that needs NATS gives up within the connect timeout: exit 1, the URL, the reason."""
    url = f"nats://127.0.0.1:{free_port()}"
    env = _env(tmp_path, APOLLO_NATS_URL=url, APOLLO_NATS_CONNECT_TIMEOUT="1")
    code, _, err = await _apollo(command, env)
    assert code == 1, err
    _assert_quiet(err)
    errors = [line for line in err.splitlines() if line.startswith("apollo: error:")]
    assert errors == [f"apollo: error: cannot reach NATS at {url} within 1 s: "
                      "connection refused (is nats-server running there?)"], err
    assert "nats_error" not in err


async def _start_up(data_dir: Path, *args: str) -> tuple[asyncio.subprocess.Process, list[str], dict]:
    """`apollo up` running and ready; returns it, its stderr so far and its state file."""
    process = await _start(["up", *args], _env(data_dir))
    seen: list[str] = []
    await _read_until(process.stderr, "Ctrl-C to stop", seen)
    state = json.loads((data_dir / STATE_FILE).read_text())
    return process, seen, state


async def _gone(pid: int) -> bool:
    """Whether ``pid`` ends (or is a zombie waiting to be reaped) within the bound."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + BOUND_S
    while loop.time() < deadline:
        if not running(pid):
            return True
        await asyncio.sleep(0.1)
    return False


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
async def test_up_stops_cleanly_on_a_closed_terminal_ctrl_c_or_sigterm(signum: signal.Signals, tmp_path) -> None:
    """The whole group signalled (as a terminal does): up stops its server, workers and pool, quietly."""
    process, seen, state = await _start_up(tmp_path, "--workers", "2")
    os.killpg(process.pid, signum)
    code, err = await _finish(process, seen)
    assert code == 0, err
    assert "apollo up: stopped" in err
    _assert_quiet(err)
    assert await _gone(state["server_pid"])
    assert not (tmp_path / STATE_FILE).exists()


async def test_solve_after_up_was_killed_works_without_clean_up(tmp_path) -> None:
    """kill -9 of up: the next solve says the engine is gone and solves with its own server."""
    process, _, state = await _start_up(tmp_path)
    process.kill()
    await asyncio.wait_for(process.wait(), BOUND_S)
    code, out, err = await _apollo(["solve", "--from-dataset", str(GSM8K)], _env(tmp_path))
    assert code == 0, err
    assert "(completed, answer)" in out
    assert "is not running" in err
    assert "running engine" not in err
    assert "embedded nats-server + in-process workers" in err
    _assert_quiet(err)
    assert await _gone(state["server_pid"])  # up's server ended with it


async def test_submit_after_up_was_killed_says_what_to_run(tmp_path) -> None:
    """A command that needs a running engine names the dead one and the fix, in lines, no hang."""
    process, _, _ = await _start_up(tmp_path)
    process.kill()
    await asyncio.wait_for(process.wait(), BOUND_S)
    code, _, err = await _apollo(["submit", "What is 1+1?"], _env(tmp_path))
    assert code == 1
    _assert_quiet(err)
    assert "apollo up" in err
    assert "apollo: error: no apollo engine is running" in err


@pytest.mark.parametrize("command", [["solve", "--from-dataset", str(GSM8K)],
                                     ["run", "--dataset", str(GSM8K), "--limit", "4", "--concurrency", "4",
                                      "--no-probe"]], ids=lambda c: c[0])
async def test_ctrl_c_prints_no_traceback_and_a_rerun_finishes(command: list[str], tmp_path) -> None:
    """Ctrl-C while model calls are in flight: exit 130, one line; running it again completes.
    Each reply takes 4 s, so on a loaded machine the Ctrl-C still lands while calls are in flight."""
    async with FakeOpenAIServer(DEMO, latency_ms=4000) as model:
        env = _env(tmp_path, APOLLO_MODEL="fake-model", APOLLO_MODEL_URL=model.base_url)
        process = await _start([*command, "--out", str(tmp_path / "results.jsonl")] if command[0] == "run"
                               else command, env)
        seen: list[str] = []
        await _read_until(process.stderr, "embedded_server_started", seen)
        await _wait_for_model_calls(model)
        os.killpg(process.pid, signal.SIGINT)
        code, err = await _finish(process, seen)
        assert code == 130, err
        assert "apollo: interrupted" in err
        _assert_quiet(err)

        rerun = [*command, "--out", str(tmp_path / "results.jsonl")] if command[0] == "run" else command
        code, _, err = await _apollo(rerun, env)
        assert code == 0, err
        _assert_quiet(err)
        if command[0] == "run":
            rows = (tmp_path / "results.jsonl").read_text().splitlines()
            assert len(rows) == 4


async def _wait_for_model_calls(model: FakeOpenAIServer) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + BOUND_S
    while not model.requests_total:
        assert loop.time() < deadline, "no model call was made"
        await asyncio.sleep(0.05)


def _ignore_ctrl_c() -> None:
    """What a shell does to a background job: SIGINT ignored (Python then keeps it ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM], ids=lambda s: s.name)
async def test_a_background_solve_ends_cleanly_on_hangup_or_sigterm(signum: signal.Signals, tmp_path) -> None:
    """Even with Ctrl-C ignored, a closed terminal or SIGTERM ends solve with its server stopped."""
    async with FakeOpenAIServer(DEMO, latency_ms=5000) as model:
        env = _env(tmp_path, APOLLO_MODEL="fake-model", APOLLO_MODEL_URL=model.base_url)
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "engine", "solve", "--from-dataset", str(GSM8K), env=env, cwd=ROOT,
            start_new_session=True, preexec_fn=_ignore_ctrl_c,  # the test's own child
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        seen: list[str] = []
        await _read_until(process.stderr, "embedded_server_started", seen)
        state = json.loads((tmp_path / STATE_FILE).read_text())
        await _wait_for_model_calls(model)
        os.killpg(process.pid, signum)
        code, err = await _finish(process, seen)
    assert code == 130, err
    assert "apollo: interrupted" in err
    _assert_quiet(err)
    assert await _gone(state["server_pid"])
    assert not (tmp_path / STATE_FILE).exists()
