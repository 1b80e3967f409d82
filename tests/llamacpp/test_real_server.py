"""apollo against llama.cpp's own server with a real (tiny) model: what only a real server can break."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import openai
import pytest

from engine.models.openai_compat import ModelEndpoint, OpenAICompatClient
from engine.models.probe import ProbeFailed, probe_endpoint
from events.model import ChatMessage, SamplingParams
from handlers.ports import ModelError
from tests.datasets.run_support import apollo_in
from tests.llamacpp.conftest import ALIAS, CTX, LlamaServer, start_server, stop_server

pytestmark = pytest.mark.timeout(240)

QUESTION = [ChatMessage(role="user", content="What is 2 + 3? Answer with a number.")]
NO_RETRIES = "models:\n  policy:\n    max_retries: 0\n"
DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def _client(url: str, **fields: object) -> OpenAICompatClient:
    return OpenAICompatClient(ModelEndpoint(base_url=url, model=ALIAS, timeout=60.0, backoff_base=0.01,
                                            backoff_max=0.05, **fields))  # type: ignore[arg-type]


def _dead_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"


async def test_solve_runs_an_episode_to_a_recorded_end_with_usage(llama: LlamaServer, tmp_path: Path) -> None:
    """`apollo solve` against llama.cpp ends with a recorded reason, and each reply's usage is in the log."""
    code, out, err = await apollo_in(tmp_path, "solve", "What is 2 + 3?", "--answer", "5", "--model", ALIAS,
                                     "--model-url", llama.url, "--max-tokens", "32", "--max-steps", "2", "--json")
    assert code == 0, err[-2000:]
    result = json.loads(out.splitlines()[-1])
    assert result["status"] == "completed" and not result["incomplete"]
    assert result["done_reason"] in ("answer", "max_steps", "empty_action", "context_length")
    code, shown, err = await apollo_in(tmp_path, "show", result["run_id"], "--json")
    assert code == 0, err[-2000:]
    replies = [json.loads(line)["event"] for line in shown.splitlines() if '"model.responded"' in line]
    assert replies and all(r["usage"]["prompt_tokens"] > 0 and r["usage"]["completion_tokens"] > 0 for r in replies)
    assert all(r["usage"]["completion_tokens"] <= 32 for r in replies)
    timings = [r["server_timings"] for r in replies]  # llama.cpp's own account, recorded with each reply
    assert all(t["generated_tokens"] == r["usage"]["completion_tokens"] and t["generated_ms"] > 0
               for t, r in zip(timings, replies, strict=True))


async def test_a_dataset_run_with_samples_records_every_sample(llama: LlamaServer, tmp_path: Path) -> None:
    """`apollo run` over two GSM8K problems x 2 samples: four results rows, each with a recorded end."""
    dataset = tmp_path / "two.jsonl"
    rows = [json.loads(line) for line in (DATA / "gsm8k.jsonl").read_text().splitlines()[:2]]
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out_file = tmp_path / "results.jsonl"
    code, out, err = await apollo_in(tmp_path, "run", "--dataset", str(dataset), "--samples", "2", "--model", ALIAS,
                                     "--model-url", llama.url, "--max-tokens", "24", "--max-steps", "1",
                                     "--out", str(out_file))
    assert code == 0, err[-2000:]
    results = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert len(results) == 4 and all(r["completed"] and r["done_reason"] for r in results)
    assert f"model {ALIAS}" in out + err


async def test_evolve_with_verifiers_runs_every_role_against_the_server(llama: LlamaServer, tmp_path: Path) -> None:
    """One evolve round with two verifiers: the policy, the summarizer and both verifiers are answered by
    llama.cpp, and the run completes with a verdict."""
    config = tmp_path / "evolve.yaml"
    config.write_text("episode:\n  max_steps: 1\nevolve:\n  rounds: 1\n  verifiers: 2\n  aggregate: false\n"
                      "  format_retries: 0\n  verifier_episode:\n    max_steps: 1\n")
    code, out, err = await apollo_in(tmp_path, "solve", "What is 2 + 3?", "--answer", "5", "--workflow", "evolve",
                                     "--model", ALIAS, "--model-url", llama.url, "--max-tokens", "24",
                                     "--config", str(config), "--json")
    assert code == 0, err[-2000:]
    result = json.loads(out.splitlines()[-1])
    assert result["status"] == "completed" and not result["incomplete"]
    code, shown, err = await apollo_in(tmp_path, "show", result["run_id"], "--json")
    assert code == 0, err[-2000:]
    events = [json.loads(line)["event"] for line in shown.splitlines() if line.startswith("{")]
    roles = {e["role"] for e in events if e.get("type") == "model.responded"}
    assert {"policy", "summarizer", "verifier"} <= roles
    assert any(e.get("type") == "verdict.reached" for e in events)


async def test_a_non_streaming_reply_has_text_and_usage(llama: LlamaServer) -> None:
    """apollo's client (non-streaming) gets text, a finish reason and token counts."""
    client = _client(llama.url)
    try:
        reply = await client.complete(QUESTION, SamplingParams(max_tokens=16, temperature=0.0))
    finally:
        await client.close()
    assert reply.text and reply.finish_reason in ("stop", "length")
    assert reply.usage is not None and reply.usage.completion_tokens <= 16 and reply.usage.prompt_tokens > 0


async def test_a_streaming_reply_arrives_in_chunks_with_usage(llama: LlamaServer) -> None:
    """The server streams the same API (chunks, then usage when asked), as the SDK reads it."""
    client = openai.AsyncOpenAI(base_url=llama.url, api_key="EMPTY")
    try:
        stream = await client.chat.completions.create(
            model=ALIAS, messages=[{"role": "user", "content": "Count: 1, 2, 3"}], max_tokens=12, stream=True,
            stream_options={"include_usage": True})
        chunks = [chunk async for chunk in stream]
    finally:
        await client.close()
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert len(chunks) > 2 and text
    assert chunks[-1].usage is not None and 0 < chunks[-1].usage.completion_tokens <= 12


async def test_a_prompt_beyond_the_context_is_context_length(llama: LlamaServer) -> None:
    """llama.cpp's 'exceeds the available context size' is context_length, not retried."""
    client = _client(llama.url, max_retries=3)
    long = [ChatMessage(role="user", content="seven " * (CTX + 200))]
    try:
        with pytest.raises(ModelError) as caught:
            await client.complete(long, SamplingParams(max_tokens=8))
    finally:
        await client.close()
    assert (caught.value.kind, caught.value.attempts) == ("context_length", 1)
    assert "exceeds the available context size" in caught.value.message


async def test_an_overflowing_solve_ends_context_length_scored_zero(llama: LlamaServer, tmp_path: Path) -> None:
    """A question longer than the context: the episode ends on context_length, scored 0, completed."""
    question = "Add these: " + " + ".join(["1"] * (CTX // 2 + 100))
    code, out, err = await apollo_in(tmp_path, "solve", question, "--answer", "5", "--model", ALIAS,
                                     "--model-url", llama.url, "--max-tokens", "16", "--json")
    assert code == 0, err[-2000:]
    result = json.loads(out.splitlines()[-1])
    assert (result["done_reason"], result["score"], result["incomplete"]) == ("context_length", 0.0, False)


async def test_the_probe_reads_the_context_and_refuses_a_name_answered_by_another_model(llama: LlamaServer) -> None:
    """The listed name passes with the context per request. llama.cpp answers any other name with its one
    model, so the probe asks, sees the listed model answer, and refuses, naming the model to use: a run
    is never recorded under a name that did not answer."""
    assert await probe_endpoint(llama.url, ALIAS, "EMPTY") == CTX
    with pytest.raises(ProbeFailed, match=rf"'{ALIAS}' answered: use --model {ALIAS}"):
        await probe_endpoint(llama.url, "a-name-it-does-not-list", "EMPTY")


async def test_a_wrong_path_on_the_real_server_fails_the_probe(llama: LlamaServer) -> None:
    """A URL whose /models and chat route both 404 (a wrong path on the real server) fails the probe."""
    wrong = llama.url.removesuffix("/v1") + "/v2"
    with pytest.raises(ProbeFailed, match=r"neither /models nor /chat/completions is found there"):
        await probe_endpoint(wrong, ALIAS, "EMPTY")


async def test_an_unreachable_port_is_a_connection_failure(tmp_path: Path) -> None:
    """Nothing on the port: the probe says not reachable; the client fails as connection."""
    url = _dead_url()
    with pytest.raises(ProbeFailed, match="is not reachable"):
        await probe_endpoint(url, ALIAS, "EMPTY", timeout=5)
    client = _client(url, max_retries=1)
    try:
        with pytest.raises(ModelError) as caught:
            await client.complete(QUESTION, SamplingParams(max_tokens=4))
    finally:
        await client.close()
    assert (caught.value.kind, caught.value.attempts) == ("connection", 2)


async def test_a_server_killed_mid_reply_fails_the_call_and_the_run(tmp_path: Path) -> None:
    """The server dies while generating: the call fails as connection; a solve then ends model_failed, exit 1."""
    server = start_server(tmp_path / "server.log", parallel=1)
    client = _client(server.url, max_retries=1)
    try:
        call = asyncio.create_task(client.complete(
            [ChatMessage(role="user", content="Write a long story about numbers.")],
            SamplingParams(max_tokens=CTX - 100, temperature=0.0)))
        await asyncio.sleep(1.0)
        server.process.kill()
        with pytest.raises(ModelError) as caught:
            await call
    finally:
        await client.close()
        stop_server(server)
    assert caught.value.kind == "connection"
    config = tmp_path / "no-retries.yaml"
    config.write_text(NO_RETRIES)
    code, out, err = await apollo_in(tmp_path, "--config", str(config), "solve", "What is 2 + 3?", "--model", ALIAS,
                                     "--model-url", server.url, "--no-probe", "--json")
    assert code == 1, err[-2000:]
    assert json.loads(out.splitlines()[-1])["done_reason"] == "model_failed"
