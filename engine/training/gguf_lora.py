"""A PEFT LoRA adapter of a llama-architecture model, written as a GGUF LoRA adapter for llama.cpp.

llama.cpp reads an adapter from a GGUF file whose metadata says ``general.type = adapter``,
``adapter.type = lora`` and ``adapter.lora.alpha``, with the base model's architecture, and
whose tensors are named after the base's: ``blk.N.attn_q.weight.lora_a`` and ``.lora_b``.
It adds ``scale * alpha / rank * B @ A`` to each named weight, as PEFT does with
``lora_alpha / r``, so the rank-``r`` matrices go over as they are: PEFT's ``lora_A`` is
(rank, in) and ``lora_B`` (out, rank), which in ggml's reversed dimension order is what
llama.cpp checks against its weight (``a.ne[0]`` = the weight's inputs, ``b.ne[1]`` its
outputs).

One difference: llama.cpp computes rotary embeddings on adjacent pairs of a head's
dimensions, transformers on its two halves, so a GGUF of a llama model holds the query and
key weights with each head's output rows reordered (transformers reorders them back when it
loads the GGUF). ``B @ A`` changes those weights row for row, so ``lora_B`` of ``q_proj`` and
``k_proj`` takes the same reordering here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.errors import EngineError

ARCHITECTURE = "llama"
GGUF_NAMES = {
    "q_proj": "attn_q", "k_proj": "attn_k", "v_proj": "attn_v", "o_proj": "attn_output",
    "gate_proj": "ffn_gate", "up_proj": "ffn_up", "down_proj": "ffn_down",
}  # fmt: skip
"""transformers' projection names -> llama.cpp's tensor names in a llama block."""
_PEFT_KEY = re.compile(
    r"layers\.(?P<layer>\d+)\.(?:self_attn|mlp)\.(?P<proj>\w+)\.lora_(?P<side>[AB])\.(?:\w+\.)?weight$"
)
"""``base_model.model.model.layers.3.self_attn.q_proj.lora_A.default.weight`` (adapter name optional)."""


class AdapterConversionError(EngineError):
    """The adapter cannot be written for llama.cpp (the message says which weight and why)."""


def gguf_tensor_name(peft_key: str) -> str:
    """``...layers.3.self_attn.q_proj.lora_A.default.weight`` -> ``blk.3.attn_q.weight.lora_a``."""
    match = _PEFT_KEY.search(peft_key)
    if match is None or match["proj"] not in GGUF_NAMES:
        msg = f"not a LoRA weight of a llama projection: {peft_key}"
        raise AdapterConversionError(msg)
    return f"blk.{match['layer']}.{GGUF_NAMES[match['proj']]}.weight.lora_{match['side'].lower()}"


def rope_rows_for_gguf(rows: Any, heads: int) -> Any:
    """Reorder the output rows of a query or key matrix (``heads`` heads) from transformers'
    half-split rotary layout to llama.cpp's pairwise one: in each head, row ``i`` of the first
    half goes to ``2i`` and row ``i`` of the second half to ``2i + 1``."""
    out_dim = rows.shape[0]
    if out_dim % (2 * heads):
        msg = f"{out_dim} rows do not split into {heads} heads of rotary pairs"
        raise AdapterConversionError(msg)
    half = out_dim // heads // 2
    return rows.reshape(heads, 2, half, *rows.shape[1:]).swapaxes(1, 2).reshape(rows.shape)


def base_heads(base_gguf: Path) -> tuple[int, int]:
    """(query heads, key/value heads) of the base model, read from its GGUF metadata."""
    # deferred: gguf is the train extra's
    import gguf

    reader = gguf.GGUFReader(str(base_gguf))
    arch = _string_field(reader, "general.architecture")
    if arch != ARCHITECTURE:
        msg = f"{base_gguf.name} is a {arch!r} model; adapters are written for {ARCHITECTURE!r} ones only"
        raise AdapterConversionError(msg)
    heads = int(_scalar_field(reader, f"{ARCHITECTURE}.attention.head_count"))
    kv_heads = _scalar_field(reader, f"{ARCHITECTURE}.attention.head_count_kv", default=heads)
    return heads, int(kv_heads)


def write_adapter(adapters: Mapping[str, Any], out: Path, *, alpha: float, heads: int, kv_heads: int) -> Path:
    """Write PEFT's LoRA weights (``lora_A`` / ``lora_B`` tensors of a llama model) to ``out`` as
    a GGUF LoRA adapter; written aside and renamed, so a reader never sees half a file."""
    # deferred: gguf and numpy come with the train extra
    import gguf
    import numpy as np

    tensors: dict[str, Any] = {}
    for key, tensor in adapters.items():
        name = gguf_tensor_name(key)
        array = np.ascontiguousarray(tensor.detach().float().cpu().numpy())
        if name.endswith("lora_b") and (".attn_q." in name or ".attn_k." in name):
            array = np.ascontiguousarray(rope_rows_for_gguf(array, heads if ".attn_q." in name else kv_heads))
        tensors[name] = array
    _check_pairs(tensors)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    writer = gguf.GGUFWriter(str(tmp), ARCHITECTURE)
    writer.add_type(gguf.GGUFType.ADAPTER)
    writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
    writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, float(alpha))
    for name in sorted(tensors):
        writer.add_tensor(name, tensors[name])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    tmp.replace(out)
    return out


def _check_pairs(tensors: Mapping[str, Any]) -> None:
    """Every weight has both halves, and their rank agrees (llama.cpp would refuse the file)."""
    if not tensors:
        raise AdapterConversionError("the checkpoint holds no LoRA weights")
    for name, a in tensors.items():
        if not name.endswith("lora_a"):
            continue
        b = tensors.get(name.removesuffix("lora_a") + "lora_b")
        if b is None or a.shape[0] != b.shape[1]:
            msg = f"{name}: no lora_b of rank {a.shape[0]} beside it"
            raise AdapterConversionError(msg)
    if sum(name.endswith("lora_b") for name in tensors) != len(tensors) // 2 or len(tensors) % 2:
        raise AdapterConversionError("a lora_b without its lora_a")


def _string_field(reader: Any, key: str) -> str:
    field = reader.get_field(key)
    if field is None:
        msg = f"the base GGUF has no {key}"
        raise AdapterConversionError(msg)
    return bytes(field.parts[field.data[0]]).decode()


def _scalar_field(reader: Any, key: str, default: float | None = None) -> float:
    field = reader.get_field(key)
    if field is None and default is not None:
        return default
    if field is None:
        msg = f"the base GGUF has no {key}"
        raise AdapterConversionError(msg)
    return float(field.parts[field.data[0]][0])
