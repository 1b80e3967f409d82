"""The parts of `apollo train --demo` on a tiny model: generation server, checkpoints, the GRPO step."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiohttp
import msgspec
import pytest
import torch

from engine.models.openai_compat import ModelEndpoint, OpenAICompatClient
from engine.training import checkpoint
from engine.training.checkpoint import CheckpointState
from engine.training.generator import GenerationRequest, Generator
from engine.training.server import GenerationServer
from engine.training.task import problems_for_step
from engine.training.trainer import Trainer
from events import ChatMessage, SamplingParams
from replay.training import TrainingCursor
from tests.training.conftest import trajectory, turn

MODEL = "tiny"


def tiny_model(tokenizer, *, favour: str | None = None, seed: int = 0):
    """A one-layer Qwen2 over the test tokenizer; ``favour`` makes one token win every step."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=256, tie_word_embeddings=False,
    )  # fmt: skip
    model = Qwen2ForCausalLM(config)
    if favour is not None:
        head = torch.nn.Linear(16, len(tokenizer), bias=True)
        torch.nn.init.zeros_(head.weight)
        torch.nn.init.zeros_(head.bias)
        with torch.no_grad():
            head.bias[tokenizer.convert_tokens_to_ids(favour)] = 20.0
        model.lm_head = head
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model.eval()


MESSAGES = [{"role": "user", "content": "what is 1 + 1 ?"}]


def test_generation_stops_after_end_of_turn_and_keeps_it(tokenizer):
    """Generation stops after the end-of-turn token, keeps it, and reports finish reason stop."""
    completion = Generator(tiny_model(tokenizer, favour="<|im_end|>"), tokenizer).generate(
        [GenerationRequest(messages=MESSAGES, max_tokens=5)]
    )[0]
    assert completion.token_ids == [tokenizer.eos_token_id]
    assert completion.finish_reason == "stop"
    assert completion.text == ""
    assert len(completion.logprobs) == 1 and completion.logprobs[0] == pytest.approx(0.0, abs=1e-3)


def test_generation_cut_at_max_tokens_reports_length(tokenizer):
    """Generation cut off at max_tokens reports finish reason length."""
    generator = Generator(tiny_model(tokenizer, favour="answer"), tokenizer)
    short, longer = generator.generate([
        GenerationRequest(messages=MESSAGES, max_tokens=2), GenerationRequest(messages=MESSAGES, max_tokens=4),
    ])  # fmt: skip
    assert short.token_ids == [tokenizer.convert_tokens_to_ids("answer")] * 2
    assert len(longer.token_ids) == 4
    assert (short.finish_reason, longer.finish_reason) == ("length", "length")
    assert short.prompt_token_ids == generator.prompt_ids(MESSAGES)
    assert short.text.split() == ["answer", "answer"]


async def test_server_returns_token_ids_logprobs_and_version_to_the_engine_client(tokenizer):
    """The generation server returns token ids, logprobs, usage and its policy version to the engine client."""
    generator = Generator(tiny_model(tokenizer), tokenizer, version=7)
    async with GenerationServer(generator, MODEL) as server:
        client = OpenAICompatClient(ModelEndpoint(base_url=server.base_url, model=MODEL, return_token_ids=True,
                                                  return_logprobs=True, max_retries=0))
        try:
            reply = await client.complete([ChatMessage(role="user", content="what is 1 + 1 ?")],
                                          SamplingParams(temperature=1.0, max_tokens=6))
        finally:
            await client.close()
        async with aiohttp.ClientSession() as http, http.get(f"{server.base_url}/models") as listing:
            models = await listing.json()
    assert reply.prompt_token_ids == generator.prompt_ids(MESSAGES)
    assert reply.token_ids and len(reply.token_ids) <= 6
    assert reply.logprobs is not None and len(reply.logprobs) == len(reply.token_ids)
    assert all(lp <= 0.0 for lp in reply.logprobs)
    assert reply.usage is not None and reply.usage.completion_tokens == len(reply.token_ids)
    assert models["data"][0]["id"] == MODEL and models["data"][0]["policy_version"] == 7


async def test_requests_arriving_together_are_generated_as_one_batch(tokenizer):
    """Requests arriving together are generated as one batch."""
    generator = Generator(tiny_model(tokenizer), tokenizer)
    # A long window that closes when the batch is full: no dependence on timing.
    async with GenerationServer(generator, MODEL, batch_window=60.0, max_batch=4) as server:
        body = {"model": MODEL, "messages": MESSAGES, "max_tokens": 3, "return_token_ids": True}
        async with aiohttp.ClientSession() as http:

            async def one() -> dict:
                async with http.post(f"{server.base_url}/chat/completions", json=body) as response:
                    return await response.json()

            replies = await asyncio.gather(*(one() for _ in range(4)))
    assert server.generated_batches == 1
    assert all(len(r["choices"][0]["token_ids"]) <= 3 for r in replies)


@pytest.mark.parametrize(
    ("body", "complaint"),
    [
        (b"not json", "JSON"),
        (b"[1, 2]", "JSON object"),
        (json.dumps({"messages": []}).encode(), "'messages'"),
        (json.dumps({"messages": [{"role": "user"}]}).encode(), "messages[0]"),
        (json.dumps({"model": "other", "messages": MESSAGES}).encode(), "unknown model"),
        (json.dumps({"messages": MESSAGES, "n": 2}).encode(), "n=1"),
        (json.dumps({"messages": MESSAGES, "stream": True}).encode(), "streaming"),
        (json.dumps({"messages": MESSAGES, "max_tokens": 0}).encode(), "'max_tokens'"),
        (json.dumps({"messages": MESSAGES, "max_tokens": "many"}).encode(), "'max_tokens'"),
        (json.dumps({"messages": MESSAGES, "max_tokens": 2.5}).encode(), "'max_tokens'"),
        (json.dumps({"messages": MESSAGES, "temperature": -1}).encode(), "'temperature'"),
        (json.dumps({"messages": MESSAGES, "top_p": 0}).encode(), "'top_p'"),
    ],
)
async def test_garbage_requests_get_a_400_naming_the_problem(tokenizer, body, complaint):
    """Malformed generation requests get an HTTP 400 naming the problem."""
    headers = {"Content-Type": "application/json"}
    async with (GenerationServer(Generator(tiny_model(tokenizer), tokenizer), MODEL) as server,
                aiohttp.ClientSession() as http,
                http.post(f"{server.base_url}/chat/completions", data=body, headers=headers) as response):
        status, reply = response.status, await response.json()
    assert status == 400
    assert complaint in reply["error"]["message"]


async def test_loaded_weights_serve_the_next_request_under_the_new_version(tokenizer):
    """Weights loaded into the server serve the next request under the new version."""
    generator = Generator(tiny_model(tokenizer, favour="answer"), tokenizer, version=1)
    stopper = tiny_model(tokenizer, favour="<|im_end|>")
    async with GenerationServer(generator, MODEL) as server:
        body = {"model": MODEL, "messages": MESSAGES, "max_tokens": 3, "return_token_ids": True}
        async with aiohttp.ClientSession() as http:
            async with http.post(f"{server.base_url}/chat/completions", json=body) as response:
                before = await response.json()
            await server.load_weights(stopper.state_dict(), 2)
            async with http.post(f"{server.base_url}/chat/completions", json=body) as response:
                after = await response.json()
    assert (before["policy_version"], before["choices"][0]["finish_reason"]) == (1, "length")
    assert (after["policy_version"], after["choices"][0]["token_ids"]) == (2, [tokenizer.eos_token_id])


def _state(step: int, cursor: TrainingCursor | None = None) -> CheckpointState:
    return CheckpointState(step=step, version=step, folder=f"step-{step:04d}", cursor=cursor or TrainingCursor(),
                           trained=[f"t{step}"], record={"step": step})


def test_checkpoint_restores_weights_optimiser_and_cursor_and_keeps_two_folders(tmp_path: Path, tokenizer):
    """A checkpoint restores weights, optimiser state and cursor, and only the last two are kept."""
    model = tiny_model(tokenizer)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model(input_ids=torch.tensor([[1, 2, 3]])).logits.sum().backward()
    optimizer.step()
    cursor = TrainingCursor(committed={"traj-a": 4}, closed_groups={"g": 4})
    for step in (1, 2, 3):
        checkpoint.save(tmp_path, _state(step, cursor), model, optimizer)
    latest = checkpoint.read_latest(tmp_path)
    assert latest is not None and (latest.step, latest.cursor, latest.record) == (3, cursor, {"step": 3})
    assert sorted(p.name for p in tmp_path.glob("step-*")) == ["step-0002", "step-0003"]
    fresh = tiny_model(tokenizer, seed=1)
    fresh_optimizer = torch.optim.AdamW(fresh.parameters(), lr=1e-3)
    checkpoint.restore(tmp_path, latest, fresh, fresh_optimizer)
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), fresh.state_dict().values(), strict=True))
    assert fresh_optimizer.state_dict()["state"].keys() == optimizer.state_dict()["state"].keys()


def test_no_checkpoint_reads_as_none(tmp_path: Path):
    """A folder without a checkpoint reads as no latest checkpoint."""
    assert checkpoint.read_latest(tmp_path) is None


def _rollout(tokenizer, group: str, index: int, reward: float, words: str):
    prompt = [ChatMessage(role="user", content="what is 1 + 1 ?")]
    prompt_ids = tokenizer.apply_chat_template([{"role": "user", "content": "what is 1 + 1 ?"}], tokenize=True,
                                               add_generation_prompt=True, return_dict=False)
    ids = [*tokenizer.encode(words, add_special_tokens=False), tokenizer.eos_token_id]
    step = turn(1, words, prompt_token_ids=list(prompt_ids), response_token_ids=ids,
                response_logprobs=[-1.0] * len(ids))
    return trajectory(group, index, reward=reward, turns=[msgspec.structs.replace(step, prompt=prompt)])


def test_grpo_step_trains_on_mixed_rewards_and_skips_a_uniform_group(tokenizer):
    """A GRPO step updates weights on a mixed-reward group and leaves a uniform-reward group flat."""
    model = tiny_model(tokenizer)
    trainer = Trainer(model, tokenizer, lr=1e-2, group_size=2, temperature=1.0, max_response_tokens=8)
    before = [p.detach().clone() for p in model.parameters()]
    mixed = [_rollout(tokenizer, "g", 0, 1.0, "the answer is 2"), _rollout(tokenizer, "g", 1, 0.0, "the answer is 3")]
    outcome = trainer.train(mixed, {t.event_id: 0 for t in mixed})
    assert outcome.result is not None and outcome.samples == 2 and outcome.rewards == [1.0, 0.0]
    assert outcome.result.grad_norm > 0 and outcome.result.tokens == 10
    # The recorded logprobs (-1.0) are far from the model's: the ratio is clipped on some tokens.
    assert 0.0 < outcome.result.clip_fraction <= 1.0
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    uniform = [_rollout(tokenizer, "u", 0, 1.0, "2"), _rollout(tokenizer, "u", 1, 1.0, "2")]
    flat = trainer.train(uniform, {})
    assert flat.result is not None and flat.result.loss == 0.0 and flat.result.grad_norm == 0.0


def test_trajectories_that_cannot_be_trained_are_reported_not_trained(tokenizer):
    """Incomplete trajectories are reported as skipped rather than trained."""
    trainer = Trainer(tiny_model(tokenizer), tokenizer, lr=1e-2, group_size=2, temperature=1.0,
                      max_response_tokens=8)
    failed = [trajectory("f", i, reward=0.0, complete=False, done_reason="model_failed") for i in range(2)]
    outcome = trainer.train(failed, {})
    assert outcome.result is None and outcome.samples == 0
    assert len(outcome.skipped) == 2 and "incomplete" in outcome.skipped[0]


def test_a_steps_problems_are_fixed_by_step_and_seed():
    """A step's demo problems are fixed by step and seed, distinct, and correctly answered."""
    first = problems_for_step(3, 4, seed=1)
    assert first == problems_for_step(3, 4, seed=1)
    assert first != problems_for_step(4, 4, seed=1)
    assert len({p.problem_id for p in first}) == 4
    for problem in first:
        a, b = (int(x) for x in problem.problem_id.removeprefix("add-").split("-"))
        assert problem.answer == str(a + b) and f"{a} + {b}?" in problem.question
        assert a + b != 5


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ("3 + 9 = \\boxed{12}", 1.0),
        ("\\boxed{ 12 }", 1.0),
        ("\\boxed{11}", 0.5),
        ("\\boxed{12} no wait \\boxed{13}", 0.5),
        ("so 3 + 9 = 12", 0.5),
        ("12 is wrong, it is 13", 0.0),
    ],
)
def test_the_demo_grade_is_half_format_half_number(reply: str, score: float):
    """The demo grade gives half for the answer format and half for the right number."""
    from engine.training.task import extract_sum, grade_sum

    answer = extract_sum(reply, None)
    assert answer is not None
    assert grade_sum.grade(answer, "12", {}).score == score


@pytest.mark.parametrize("reply", ["I cannot say", "<think>\\boxed{12}</think> I give up"])
def test_a_reply_without_a_visible_number_has_no_answer(reply: str):
    """A reply without a visible number yields no answer."""
    from engine.training.task import extract_sum

    assert extract_sum(reply, None) is None


def test_a_lora_checkpoint_holds_only_the_adapters_and_updates_the_served_copy(tmp_path: Path, tokenizer):
    """A LoRA checkpoint holds only adapter weights, which update the served copy; unknown keys are refused."""
    import copy

    from engine.training.trainer import trainable_state, with_lora

    model = with_lora(tiny_model(tokenizer), rank=2)
    served = Generator(copy.deepcopy(model), tokenizer, version=0)
    trainer = Trainer(model, tokenizer, lr=1e-1, group_size=2, temperature=1.0, max_response_tokens=8)
    trainer.train([_rollout(tokenizer, "g", 0, 1.0, "the answer is 2"),
                   _rollout(tokenizer, "g", 1, 0.0, "the answer is 3")], {})
    checkpoint.save(tmp_path, _state(1), model, trainer.optimizer)
    saved = checkpoint.load_weights(tmp_path / "step-0001")
    assert saved and all("lora_" in name for name in saved)
    assert saved.keys() == trainable_state(model).keys()
    served.load_state(saved, 1)
    assert served.version == 1
    assert all(torch.equal(served.model.state_dict()[k], v) for k, v in saved.items())
    with pytest.raises(ValueError, match="does not have"):
        served.load_state({"not.a.weight": torch.zeros(1)}, 2)
    assert served.version == 1
