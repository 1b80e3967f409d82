"""The trainer's LoRA adapters as a GGUF LoRA adapter: llama.cpp loads it and serves what the trainer computes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from engine.serving import LoadFailed
from engine.training.gguf_lora import (
    AdapterConversionError,
    base_heads,
    gguf_tensor_name,
    rope_rows_for_gguf,
    write_adapter,
)
from engine.training.llamacpp_policy import AdapterShape, LlamaCppLoraLoader, LlamaCppPolicyServer
from engine.training.model_package import MODEL_NAME, gguf_path
from engine.training.task import SYSTEM_PROMPT
from events.policy import PolicyUpdated
from handlers.episode.prompts import render_plain_prompt
from tests.llamacpp.conftest import _gguf

pytestmark = pytest.mark.timeout(300)

torch = pytest.importorskip("torch")
gguf = pytest.importorskip("gguf")

RANK = 8
CHAT = [{"role": "user", "content": "Name a colour."}]
"""A prompt with many likely replies, so an adapter visibly moves the greedy one."""
GREEDY = 12


@pytest.fixture(scope="module")
def policy() -> tuple[Any, Any]:
    """The trainer's model (from the set-up's GGUF, dequantised) with rank-8 adapters of fixed random weights."""
    _gguf()
    from engine.training.model_package import load_policy
    from engine.training.trainer import with_lora

    torch.manual_seed(0)
    model, tokenizer = load_policy()
    model = with_lora(model, RANK)
    with torch.no_grad():
        for name, weight in model.named_parameters():
            if "lora_B" in name:  # PEFT starts B at 0 (no change): make the adapter change the output
                weight.normal_(0.0, 0.1)
    return model, tokenizer


def _adapters(model: Any) -> dict[str, Any]:
    from engine.training.trainer import trainable_state

    return trainable_state(model)


def _shape(model: Any) -> AdapterShape:
    from engine.training.trainer import lora_alpha

    return AdapterShape.of(model, lora_alpha(RANK))


def _trainer_greedy(model: Any, tokenizer: Any) -> list[int]:
    prompt = tokenizer.apply_chat_template(CHAT, tokenize=True, add_generation_prompt=True, return_dict=False)
    with torch.no_grad():
        out = model.generate(input_ids=torch.tensor([prompt]), max_new_tokens=GREEDY, do_sample=False,
                             attention_mask=torch.ones(1, len(prompt), dtype=torch.long))
    return out[0, len(prompt):].tolist()


def _trainer_logprobs(model: Any, tokenizer: Any, ids: list[int]) -> list[float]:
    """The trainer's log-probability of each of ``ids`` after the prompt (teacher-forced)."""
    prompt = tokenizer.apply_chat_template(CHAT, tokenize=True, add_generation_prompt=True, return_dict=False)
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([prompt + ids])).logits[0, len(prompt) - 1 : -1].float()
    return torch.log_softmax(logits, -1).gather(-1, torch.tensor(ids)[:, None]).squeeze(-1).tolist()


async def _served_greedy(server: LlamaCppPolicyServer) -> tuple[list[int], list[float]]:
    body = {"model": MODEL_NAME, "messages": CHAT, "max_tokens": GREEDY, "temperature": 0.0, "logprobs": True,
            "top_logprobs": 1}
    async with aiohttp.ClientSession() as http, http.post(f"{server.base_url}/chat/completions", json=body) as reply:
        assert reply.status == 200, await reply.text()
        tokens = (await reply.json())["choices"][0]["logprobs"]["content"]
    return [t["id"] for t in tokens], [t["logprob"] for t in tokens]


def _update(folder: Path, version: int) -> PolicyUpdated:
    from datetime import UTC, datetime

    return PolicyUpdated(event_id=f"update-{version}", run_id="policy-default", occurred_at=datetime.now(UTC),
                         version=version, checkpoint=str(folder), base_model="SmolLM2-135M-Instruct",
                         adapter=f"{MODEL_NAME}-lora")


def _mean_gap(a: list[float], b: list[float]) -> float:
    return sum(abs(x - y) for x, y in zip(a, b, strict=True)) / len(a)


def test_peft_names_become_llama_cpp_tensor_names() -> None:
    """Every projection PEFT adapts is named as llama.cpp's llama blocks name it; anything else is refused."""
    prefix = "base_model.model.model.layers.3"
    assert gguf_tensor_name(f"{prefix}.self_attn.q_proj.lora_A.default.weight") == "blk.3.attn_q.weight.lora_a"
    assert gguf_tensor_name(f"{prefix}.self_attn.o_proj.lora_B.weight") == "blk.3.attn_output.weight.lora_b"
    assert gguf_tensor_name(f"{prefix}.mlp.down_proj.lora_B.default.weight") == "blk.3.ffn_down.weight.lora_b"
    with pytest.raises(AdapterConversionError, match="not a LoRA weight"):
        gguf_tensor_name("base_model.model.lm_head.weight")


def test_query_rows_are_reordered_into_rotary_pairs_per_head() -> None:
    """In each head, row i of the first half goes to 2i and row i of the second half to 2i + 1."""
    rows = torch.arange(8).reshape(8, 1).numpy()  # 2 heads of 4 rows: halves [0 1][2 3], [4 5][6 7]
    assert rope_rows_for_gguf(rows, heads=2).ravel().tolist() == [0, 2, 1, 3, 4, 6, 5, 7]


def test_the_base_gguf_has_the_heads_the_trainers_config_names(policy: tuple[Any, Any]) -> None:
    """The conversion takes the heads from the trained model's config: the served GGUF agrees."""
    shape = _shape(policy[0])
    assert base_heads(gguf_path()) == (shape.heads, shape.kv_heads)


def test_the_written_adapter_says_it_is_a_lora_adapter_with_its_alpha(policy: tuple[Any, Any], tmp_path: Path) -> None:
    """The file has llama.cpp's adapter metadata and an (A, B) pair per adapted weight."""
    shape = _shape(policy[0])
    out = write_adapter(_adapters(policy[0]), tmp_path / "adapter.gguf", alpha=shape.alpha, heads=shape.heads,
                        kv_heads=shape.kv_heads)
    reader = gguf.GGUFReader(str(out))

    def text(key: str) -> str:
        field = reader.get_field(key)
        return bytes(field.parts[field.data[0]]).decode()

    assert (text("general.architecture"), text("general.type"), text("adapter.type")) == ("llama", "adapter", "lora")
    alpha = reader.get_field("adapter.lora.alpha")
    assert float(alpha.parts[alpha.data[0]][0]) == 2 * RANK
    names = {t.name for t in reader.tensors}
    assert "blk.0.attn_q.weight.lora_a" in names and "blk.29.ffn_down.weight.lora_b" in names
    assert len(names) == 30 * 7 * 2


async def test_llama_cpp_serves_the_adapter_as_the_trainer_computes_it(policy: tuple[Any, Any], tmp_path: Path) -> None:
    """Through the loader, llama.cpp serves the converted adapter: its greedy reply leaves the base model's,
    starts as the trainer's own greedy reply, and its logprobs are the adapted model's, not the base's."""
    model, tokenizer = policy
    folder = tmp_path / "step-0001"
    folder.mkdir()
    torch.save(_adapters(model), folder / "model.pt")
    trainer_ids = await asyncio.to_thread(_trainer_greedy, model, tokenizer)
    server = LlamaCppPolicyServer(gguf_path(), MODEL_NAME, parallel=1, ctx_per_slot=256)
    await server.start()
    try:
        base_ids, _ = await _served_greedy(server)
        assert await LlamaCppLoraLoader(server, _shape(model)).load(_update(folder, 1), None) is None
        assert server.lora == folder / "adapter.gguf"
        served_ids, served_logprobs = await _served_greedy(server)
    finally:
        await server.close()
    assert served_ids != base_ids
    assert served_ids[:4] == trainer_ids[:4]
    adapted = await asyncio.to_thread(_trainer_logprobs, model, tokenizer, served_ids)
    with model.disable_adapter():
        base = await asyncio.to_thread(_trainer_logprobs, model, tokenizer, served_ids)
    # llama.cpp runs the 4-bit weights with 8-bit activations: close to the adapted model, far from the base
    assert _mean_gap(served_logprobs, adapted) < 0.3 < _mean_gap(served_logprobs, base)


async def test_a_checkpoint_without_adapters_is_refused_and_the_served_version_stays(tmp_path: Path) -> None:
    """A checkpoint holding no LoRA weights is a LoadFailed naming it; the server is never restarted."""
    _gguf()
    folder = tmp_path / "step-0001"
    folder.mkdir()
    torch.save({"base_model.model.lm_head.weight": torch.zeros(2, 2)}, folder / "model.pt")
    server = LlamaCppPolicyServer(gguf_path(), MODEL_NAME)  # never started: a refusal must not touch it
    with pytest.raises(LoadFailed, match=r"cannot write the adapter of .*step-0001"):
        await LlamaCppLoraLoader(server, AdapterShape(alpha=16.0, heads=9, kv_heads=3)).load(_update(folder, 1), None)
    assert server.starts == 0 and not (folder / "adapter.gguf").exists()


async def test_the_trainer_tokenises_a_demo_prompt_as_llama_cpp_does(policy: tuple[Any, Any]) -> None:
    """llama.cpp returns no prompt ids, so the trainer tokenises the prompt itself: to the same ids."""
    tokenizer = policy[1]
    chat = [{"role": m.role, "content": m.content}
            for m in render_plain_prompt("What is 3 + 4? Put your final answer in \\boxed{}.",
                                         system_prompt=SYSTEM_PROMPT)]
    server = LlamaCppPolicyServer(gguf_path(), MODEL_NAME, parallel=1, ctx_per_slot=512)
    await server.start()
    try:
        root = server.base_url.removesuffix("/v1")
        async with aiohttp.ClientSession() as http:
            async with http.post(f"{root}/apply-template", json={"messages": chat}) as reply:
                text = (await reply.json())["prompt"]
            async with http.post(f"{root}/tokenize", json={"content": text, "parse_special": True}) as reply:
                served = (await reply.json())["tokens"]
    finally:
        await server.close()
    trained = tokenizer.apply_chat_template(chat, tokenize=True, add_generation_prompt=True, return_dict=False)
    assert list(trained) == served
