"""Replies no longer than the server can give: its context read from /models or /props, max_tokens fitted to it."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.models.fake_server import FakeOpenAIServer
from engine.models.probe import probe_endpoint
from engine.models.server_context import fitted_max_tokens, listed_context
from tests.datasets.run_support import ANSWER, apollo_in, jsonl_rows, sums_dataset

LLAMACPP_ENTRY = {"id": "smollm2", "owned_by": "llamacpp", "meta": {"n_ctx": 2048, "n_ctx_train": 8192}}
VLLM_ENTRY = {"id": "qwen", "owned_by": "vllm", "max_model_len": 32768}


def test_the_context_is_read_from_llamacpp_and_vllm_listings() -> None:
    """llama.cpp's meta.n_ctx (any name: one model served) and vLLM's max_model_len; OpenAI's lists none."""
    assert listed_context([LLAMACPP_ENTRY], "any-name") == 2048
    assert listed_context([VLLM_ENTRY, {"id": "other"}], "qwen") == 32768
    assert listed_context([VLLM_ENTRY, {"id": "other"}], "third") is None
    assert listed_context([{"id": "gpt-4o", "owned_by": "openai"}], "gpt-4o") is None


def test_max_tokens_beyond_the_context_becomes_half_of_it() -> None:
    """A length the server can give is kept; one it cannot is lowered, leaving room for the prompt."""
    assert fitted_max_tokens(8192, 2048) == 1024
    assert fitted_max_tokens(2048, 2048) == 2048
    assert fitted_max_tokens(8192, None) == 8192


async def test_the_probe_returns_the_servers_context() -> None:
    """The probe says the context the listing gives, and None where it gives none."""
    async with FakeOpenAIServer(models=("m",), max_context=4096) as server:
        assert await probe_endpoint(server.base_url, "m", "EMPTY") == 4096
    async with FakeOpenAIServer(models=("m",)) as server:
        assert await probe_endpoint(server.base_url, "m", "EMPTY") is None


@pytest.mark.timeout(300)  # two solves, each starting its own nats-server, on a shared machine
async def test_solve_takes_max_tokens_and_lowers_one_the_server_cannot_give(tmp_path: Path) -> None:
    """`solve --max-tokens 300` is sent as is; the default 8192 against a 1000-token server is sent as 500, said."""
    async with FakeOpenAIServer(lambda messages: ANSWER, models=("m",), max_context=1000) as server:
        base = ["solve", "What is 2 + 3?", "--answer", "5", "--model", "m", "--model-url", server.base_url]
        code, _, err = await apollo_in(tmp_path, *base, "--max-tokens", "300")
        assert code == 0, err[-2000:]
        assert server.bodies[-1]["max_tokens"] == 300
        code, _, err = await apollo_in(tmp_path, *base)
        assert code == 0, err[-2000:]
        assert server.bodies[-1]["max_tokens"] == 500
        assert "max tokens 8192 lowered to 500" in err


@pytest.mark.timeout(300)
async def test_a_dataset_run_is_fitted_before_its_settings_digest(tmp_path: Path) -> None:
    """`apollo run` against a 1000-token server sends 500 and records it; a re-run resumes (same digest)."""
    data = str(sums_dataset(tmp_path))
    async with FakeOpenAIServer(lambda messages: ANSWER, models=("m",), max_context=1000) as server:
        command = ["run", "--dataset", data, "--model", "m", "--model-url", server.base_url, "--out", "rows.jsonl"]
        code, _, err = await apollo_in(tmp_path, *command)
        assert code == 0, err[-2000:]
        assert {body["max_tokens"] for body in server.bodies} == {500}
        sent = server.requests_total
        code, _, err = await apollo_in(tmp_path, *command)
        assert code == 0 and server.requests_total == sent, err[-2000:]
    assert len(jsonl_rows(tmp_path / "rows.jsonl")) == 2
