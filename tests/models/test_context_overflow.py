"""A prompt that no longer fits the server's context ends the episode on its own reason, in every server's wording."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.models.fake_replies import CONTEXT_WORDINGS
from engine.models.fake_server import FakeOpenAIServer
from engine.models.openai_compat import ModelEndpoint, OpenAICompatClient
from events.model import ChatMessage, SamplingParams
from handlers.ports import ModelError
from tests.datasets.run_support import ANSWER, apollo_in, jsonl_rows, sums_dataset

QUESTION = [ChatMessage(role="user", content="What is 2 + 3? " * 20)]


@pytest.mark.parametrize("wording", CONTEXT_WORDINGS)
async def test_each_servers_overflow_wording_is_context_length(wording: str) -> None:
    """vLLM's, SGLang's, llama.cpp's and OpenAI's overflow errors all fail at once as context_length."""
    async with FakeOpenAIServer(max_context=100, context_wording=wording) as fake:
        client = OpenAICompatClient(ModelEndpoint(base_url=fake.base_url, model="m", max_retries=3))
        try:
            with pytest.raises(ModelError) as caught:
                await client.complete(QUESTION, SamplingParams(max_tokens=50))
        finally:
            await client.close()
        assert (caught.value.kind, caught.value.attempts, fake.requests_total) == ("context_length", 1, 1)


@pytest.mark.parametrize("wording", ["llamacpp", "openai"])
async def test_an_overflowing_run_scores_zero_ends_context_length_and_is_not_retried(
    tmp_path: Path, wording: str
) -> None:
    """Each sample ends `context_length` with score 0 and counts as finished: a re-run sends no request."""
    data = str(sums_dataset(tmp_path))
    async with FakeOpenAIServer(lambda messages: ANSWER, max_context=60, context_wording=wording,
                                models=("m",)) as server:
        command = ["run", "--dataset", data, "--model", "m", "--model-url", server.base_url,
                   "--max-tokens", "40", "--no-probe", "--out", "rows.jsonl"]
        _, _, err = await apollo_in(tmp_path, *command)
        assert "could not be completed" not in err, err[-2000:]
        rows = jsonl_rows(tmp_path / "rows.jsonl")
        assert {(row["done_reason"], row["score"]) for row in rows} == {("context_length", 0.0)}, rows
        sent = server.requests_total
        _, _, err = await apollo_in(tmp_path, *command)
        assert server.requests_total == sent, err[-2000:]
