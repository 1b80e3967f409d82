"""Factories for sealed trajectories and a tiny local chat tokenizer (no downloads)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from events import ChatMessage, TrajectorySealed, Turn

WORDS = [
    "system",
    "user",
    "assistant",
    "tool",
    "you",
    "solve",
    "math",
    "problems",
    "what",
    "is",
    "1",
    "2",
    "3",
    "4",
    "5",
    "+",
    "=",
    "?",
    "the",
    "answer",
    "python",
    "code",
    "print",
    "output",
    "result",
    "boxed",
    "think",
    "let",
    "me",
    "compute",
    "so",
    "it",
    "check",
    "again",
    "ok",
]
TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
_T0 = datetime(2025, 1, 1, tzinfo=UTC)


def turn(step: int, response: str = "the answer is 2", **fields: Any) -> Turn:
    """A turn whose prompt is a system + user message."""
    prompt = [
        ChatMessage(role="system", content="you solve math problems"),
        ChatMessage(role="user", content=f"what is 1 + 1 ? step {step}"),
    ]
    return Turn(step=step, prompt=prompt, response=response, **fields)


def trajectory(
    group: str = "g1",
    index: int = 0,
    *,
    reward: float = 1.0,
    turns: list[Turn] | None = None,
    **fields: Any,
) -> TrajectorySealed:
    """A sealed trajectory of group ``group``, slot ``index``."""
    values: dict[str, Any] = {
        "event_id": f"traj-{group}-{index}",
        "run_id": f"run-{group}-{index}",
        "occurred_at": _T0,
        "problem_id": f"p-{group}",
        "group_id": group,
        "sample_index": index,
        "data_source": "math500",
        "turns": turns if turns is not None else [turn(1)],
        "reward": reward,
        "score": reward,
        "done_reason": "answer",
        "invalid_turns": 0,
        "model": "scripted:test",
    }
    values.update(fields)
    return TrajectorySealed(**values)


def build_tokenizer(path: Path) -> Any:
    """A WordLevel tokenizer with a ChatML-like template, saved to ``path`` and reloaded."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from replay.training.tokens import load_tokenizer

    specials = ["[PAD]", "[UNK]", "<|im_start|>", "<|im_end|>"]
    vocab = {w: i for i, w in enumerate(specials + sorted(set(WORDS)))}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="[PAD]",
        unk_token="[UNK]",
        eos_token="<|im_end|>",
        additional_special_tokens=["<|im_start|>"],
    )
    fast.chat_template = TEMPLATE
    fast.save_pretrained(str(path))
    return load_tokenizer(path)


@pytest.fixture(scope="session")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The tiny tokenizer, loaded from a local folder."""
    return build_tokenizer(tmp_path_factory.mktemp("tokenizer"))


@pytest.fixture(scope="session")
def tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tokenizer-dir")
    build_tokenizer(path)
    return path
