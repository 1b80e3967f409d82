"""The RL loop's llama.cpp server leaves one CPU to the trainer and the engine unless told otherwise."""

from __future__ import annotations

import os
from pathlib import Path

from engine.models.llamacpp_server import default_threads
from engine.training.llamacpp_policy import LlamaCppPolicyServer


def test_the_policy_server_uses_every_cpu_but_one_by_default() -> None:
    """No thread count given: every CPU this process may use but one, at least one."""
    server = LlamaCppPolicyServer(Path("model.gguf"), "m")
    assert server.threads == default_threads() == max(1, len(os.sched_getaffinity(0)) - 1)


def test_a_thread_count_given_is_kept() -> None:
    """An explicit thread count is what llama.cpp is given."""
    assert LlamaCppPolicyServer(Path("model.gguf"), "m", threads=3).threads == 3
