"""Token fidelity: apollo's verl client and verl's ToolAgentLoop give the same ids on the same chat."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verl.experimental.agent_loop")

from events.model import ChatMessage, SamplingParams
from tests.training.verl_fakes import ScriptedServer, smol_tokenizer_dir, verl_config

TOOL_CALL = '<tool_call>\n{"name": "calc", "arguments": {"expr": "6*7"}}\n</tool_call>'
RULES = [(r"tool\s*\n\s*42", "The program printed 42, so the answer is \\boxed{42}."), (r"6 times 7", TOOL_CALL)]
QUESTION = [{"role": "system", "content": "You solve math problems."},
            {"role": "user", "content": "What is 6 times 7?"}]


@pytest.fixture(scope="module")
def smol_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SmolLM2's tokenizer and a tiny model config in a local folder."""
    return smol_tokenizer_dir(tmp_path_factory.mktemp("smol"))


def loops(smol_dir: Path, tmp_path: Path) -> tuple[Any, Any, Any]:
    """verl's ToolAgentLoop (one tool, ``calc``, answering 42) and apollo's loop over one scripted server."""
    from transformers import AutoTokenizer
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap
    from verl.experimental.agent_loop.tool_agent_loop import ToolAgentLoop
    from verl.tools.function_tool import FunctionTool
    from verl.tools.schemas import OpenAIFunctionToolSchema
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from engine.training.verl_loop.loop import ApolloAgentLoop

    config = verl_config(smol_dir, tmp_path / "unused.yaml")
    tokenizer = AutoTokenizer.from_pretrained(str(smol_dir))
    server = ScriptedServer(tokenizer, RULES)
    schema = OpenAIFunctionToolSchema.model_validate({"type": "function", "function": {
        "name": "calc", "description": "Evaluate an expression.",
        "parameters": {"type": "object", "properties": {"expr": {"type": "string", "description": "it"}},
                       "required": ["expr"]}}})  # fmt: skip
    calc = FunctionTool(name="calc", fn=lambda expr: "42", tool_schema=schema)
    common = {"trainer_config": DictConfigWrap(config), "server_manager": server, "tokenizer": tokenizer,
              "processor": None, "dataset_cls": RLHFDataset, "data_config": DictConfigWrap(config.data),
              "hf_model_type": "llama"}
    return ToolAgentLoop(tools=ToolListWrap([calc]), **common), ApolloAgentLoop(**common), server


def client_of(apollo_loop: Any, sequence: str = "last") -> Any:
    from engine.training.verl_loop.client import VerlModelClient

    return VerlModelClient(apollo_loop, request_id="sticky", model="verl:test", verl_params={"logprobs": True},
                           prompt_length=apollo_loop.prompt_length, response_length=apollo_loop.response_length,
                           sequence=sequence)


async def test_tool_chat_matches_tool_agent_loop(smol_dir: Path, tmp_path: Path) -> None:
    """A tool call, its observation and the answer: same prompt, response ids, mask and log-probs."""
    tool_loop, apollo_loop, server = loops(smol_dir, tmp_path)
    params = {"temperature": 1.0, "top_p": 1.0, "top_k": -1, "repetition_penalty": 1.0, "logprobs": True}
    theirs = await tool_loop.run(params, raw_prompt=list(QUESTION))
    client = client_of(apollo_loop)
    sampling = SamplingParams(temperature=1.0, max_tokens=512)
    chat = [ChatMessage(role=m["role"], content=m["content"]) for m in QUESTION]
    first = await client.complete(chat, sampling)
    second_chat = [*chat, ChatMessage(role="assistant", content=first.text), ChatMessage(role="tool", content="42")]
    second = await client.complete(second_chat, sampling)
    ours = client.tokens
    assert ours.prompt_ids == theirs.prompt_ids
    assert ours.response_ids == theirs.response_ids
    assert ours.response_mask == theirs.response_mask
    assert ours.response_logprobs == theirs.response_logprobs
    assert second.token_ids == ours.response_ids[-len(second.token_ids):]  # the server's ids, verbatim
    assert {c["request_id"] for c in server.calls[-2:]} == {"sticky"}  # one sticky session per sample
    assert ours.trained_calls == 2 and ours.untrained_calls == 0


@pytest.mark.parametrize("sequence", ["last", "first"])
async def test_fresh_prompt_is_generated_as_rendered(smol_dir: Path, tmp_path: Path, sequence: str) -> None:
    """A prompt that does not continue the sequence is generated on exactly its own ids; one sequence is trained."""
    _, apollo_loop, server = loops(smol_dir, tmp_path)
    client = client_of(apollo_loop, sequence)
    sampling = SamplingParams(temperature=1.0, max_tokens=512)
    chat = [ChatMessage(role=m["role"], content=m["content"]) for m in QUESTION]
    first = await client.complete(chat, sampling)
    fresh = [chat[0], ChatMessage(role="user", content="What is 6 times 7? [Observation 1] tool\n42")]
    reply = await client.complete(fresh, sampling)
    rendered = apollo_loop.tokenizer.apply_chat_template(
        [{"role": m.role, "content": m.content} for m in fresh], add_generation_prompt=True, tokenize=True)
    rendered = rendered["input_ids"] if hasattr(rendered, "keys") else rendered
    assert reply.prompt_token_ids == list(rendered) == server.calls[-1]["prompt_ids"]
    assert client.tokens.untrained_calls == 1 and client.tokens.trained_calls == 1
    kept = reply if sequence == "last" else first
    assert client.tokens.prompt_ids == kept.prompt_token_ids
    assert client.tokens.response_ids == kept.token_ids
