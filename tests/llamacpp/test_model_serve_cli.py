"""`apollo model serve`: what it prints, and one line for a file it cannot serve."""

from __future__ import annotations

from pathlib import Path

from tests.datasets.run_support import apollo_in
from tests.llamacpp.conftest import ALIAS, CTX, LlamaServer


def test_it_prints_the_url_then_the_name_and_context_per_request(llama: LlamaServer) -> None:
    """The first line is the base URL; the next names the model and the context one request may use."""
    assert llama.url.startswith("http://127.0.0.1:") and llama.url.endswith("/v1")
    assert llama.said.startswith(f"model '{ALIAS}' (") and f"context {CTX} tokens per request" in llama.said


async def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    """No GGUF at the path: exit 1 and one error line, nothing served."""
    code, out, err = await apollo_in(tmp_path, "model", "serve", str(tmp_path / "nope.gguf"), "--port", "0")
    assert code == 1 and out == ""
    assert [line for line in err.splitlines() if line.startswith("apollo: error:")] == [
        f"apollo: error: no GGUF file at {tmp_path / 'nope.gguf'}"]
