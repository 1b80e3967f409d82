"""The fake OpenAI-compatible server: endpoints, controls, garbage requests and its CLI."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from engine.models.fake_server import FakeOpenAIServer
from engine.models.scripted import ScriptedModelClient, parse_script

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "scripted" / "demo.json"


def _post(url: str, data: bytes) -> tuple[int, dict[str, object]]:
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _get(url: str) -> dict[str, object]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


async def test_models_endpoint_lists_configured_names() -> None:
    """GET /v1/models lists the configured model names."""
    async with FakeOpenAIServer(models=["a", "b"]) as fake:
        listing = await asyncio.to_thread(_get, f"{fake.base_url}/models")
    assert [m["id"] for m in listing["data"]] == ["a", "b"]  # type: ignore[index]


@pytest.mark.parametrize(
    "body",
    [b"", b"{", b"[]", b'"text"', b'{"messages": "hi"}', b'{"messages": [1]}',
     b'{"messages": [], "max_tokens": 0}', b'{"messages": [], "max_tokens": "x"}'],
)  # fmt: skip
async def test_garbage_requests_get_400_and_the_server_keeps_serving(body: bytes) -> None:
    """Malformed request bodies are answered with a 400 error object."""
    async with FakeOpenAIServer() as fake:
        url = f"{fake.base_url}/chat/completions"
        status, error = await asyncio.to_thread(_post, url, body)
        assert status == 400 and error["object"] == "error"
        ok, _ = await asyncio.to_thread(_post, url, b'{"model": "m", "messages": []}')
    assert ok == 200


async def test_scripted_policy_without_a_match_answers_400() -> None:
    """A scripted policy that has no reply for the prompt gives a 400 naming the script."""
    script = ScriptedModelClient(parse_script({"rules": [{"match": "x", "reply": "y"}]}), name="s")
    async with FakeOpenAIServer(script) as fake:
        status, error = await asyncio.to_thread(
            _post, f"{fake.base_url}/chat/completions", b'{"messages": [{"role": "user"}]}'
        )
    assert status == 400
    assert "scripted:s" in str(error["message"])


async def test_max_tokens_truncates_with_finish_reason_length() -> None:
    """Replies longer than max_tokens fake tokens are cut and marked length."""
    async with FakeOpenAIServer(lambda m: "abcdef") as fake:
        _, reply = await asyncio.to_thread(
            _post, f"{fake.base_url}/chat/completions", b'{"messages": [], "max_tokens": 4}'
        )
    choice = reply["choices"][0]  # type: ignore[index]
    assert (choice["message"]["content"], choice["finish_reason"]) == ("abcd", "length")


async def test_unknown_faults_are_refused() -> None:
    """Planning a fault that does not exist raises at once."""
    async with FakeOpenAIServer() as fake:
        with pytest.raises(ValueError, match="unknown fault"):
            fake.plan("explode")


async def test_remote_controls_plan_report_and_reset() -> None:
    """Other processes can plan faults, read counters and reset them over HTTP."""
    async with FakeOpenAIServer() as fake:
        root = fake.base_url.removesuffix("/v1")
        status, _ = await asyncio.to_thread(
            _post, f"{root}/fake/plan", b'{"plan": ["http_500", {"content": "canned"}]}'
        )
        assert status == 200
        chat = f"{fake.base_url}/chat/completions"
        first, _ = await asyncio.to_thread(_post, chat, b'{"model": "m", "messages": []}')
        _, second = await asyncio.to_thread(_post, chat, b'{"model": "m", "messages": []}')
        stats = await asyncio.to_thread(_get, f"{root}/fake/stats")
        bad, _ = await asyncio.to_thread(_post, f"{root}/fake/plan", b'{"plan": ["explode"]}')
        await asyncio.to_thread(_post, f"{root}/fake/reset", b"")
        after = await asyncio.to_thread(_get, f"{root}/fake/stats")
    assert first == 500
    assert second["choices"][0]["message"]["content"] == "canned"  # type: ignore[index]
    assert stats["requests_total"] == 2 and stats["requests_by_model"] == {"m": 2}
    assert bad == 400
    assert after["requests_total"] == 0


async def test_cli_prints_its_url_and_serves_the_script() -> None:
    """python -m engine.models.fake_server prints a base URL and answers from the script."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "engine.models.fake_server", "--script", str(DEMO),
        "--fail", "http_500", cwd=REPO, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        base_url = (await asyncio.wait_for(process.stdout.readline(), 30)).decode().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        body = json.dumps(
            {"model": "m", "messages": [{"role": "user", "content": "What is 2 times 3?"}]}
        )
        chat = f"{base_url}/chat/completions"
        failed, _ = await asyncio.to_thread(_post, chat, body.encode())
        status, reply = await asyncio.to_thread(_post, chat, body.encode())
    finally:
        process.terminate()
        await process.wait()
    assert failed == 500 and status == 200
    assert "a, b = 2, 3" in reply["choices"][0]["message"]["content"]  # type: ignore[index]
    assert process.returncode == 0


def test_cli_with_a_bad_script_exits_2_with_a_message(tmp_path: Path) -> None:
    """A broken --script file is reported on stderr with exit status 2, no traceback."""
    bad = tmp_path / "bad.json"
    bad.write_text("{oops", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "engine.models.fake_server", "--script", str(bad)],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "bad.json" in done.stderr and "Traceback" not in done.stderr


def test_jitter_spreads_each_wait_around_the_latency_within_its_bounds() -> None:
    """Waits are drawn from latency +/- jitter, differ call to call, and repeat run to run."""
    first = FakeOpenAIServer(latency_ms=50, jitter_ms=20).next_wait_s()
    fake = FakeOpenAIServer(latency_ms=50, jitter_ms=20)
    drawn = [fake.next_wait_s() for _ in range(200)]
    assert all(0.030 <= wait <= 0.070 for wait in drawn)
    assert len(set(drawn)) > 100
    assert drawn[0] == first  # seeded: every benchmark run sees the same waits


def test_jitter_never_exceeds_the_latency_and_defaults_to_a_fixed_wait() -> None:
    """A jitter above the latency is capped (no negative waits); no jitter: always the latency."""
    capped = FakeOpenAIServer(latency_ms=10, jitter_ms=500)
    assert all(0.0 <= capped.next_wait_s() <= 0.020 for _ in range(200))
    fixed = FakeOpenAIServer(latency_ms=50)
    assert {fixed.next_wait_s() for _ in range(20)} == {0.05}


def test_a_negative_jitter_is_refused_by_the_server_and_its_cli() -> None:
    """A negative jitter is an error with a message, never a silently fixed wait."""
    with pytest.raises(ValueError, match="jitter must be 0 ms or more"):
        FakeOpenAIServer(latency_ms=50, jitter_ms=-1)
    done = subprocess.run(  # our own module
        [sys.executable, "-m", "engine.models.fake_server", "--latency-ms", "50", "--jitter-ms", "-5"],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--jitter-ms" in done.stderr and "must be 0 or more" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("option", "value", "complaint"),
    [("--port", "-5", "must be between 0 and 65535"), ("--port", "http", "expected a whole number"),
     ("--max-context", "0", "must be 1 or more")],
)
def test_cli_refuses_a_bad_port_or_context_with_a_message(option: str, value: str, complaint: str) -> None:
    """A port out of range or a context below one token is a usage error, not a traceback."""
    done = subprocess.run(  # our own module
        [sys.executable, "-m", "engine.models.fake_server", option, value],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 2
    assert option in done.stderr and complaint in done.stderr and "Traceback" not in done.stderr
