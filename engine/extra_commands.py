"""Subcommands contributed by engine modules: each module owns its own parser."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

MODULES = (
    "engine.sandbox.cli",
    "engine.rag.cli",
    "engine.training_cli",
    "engine.dataset_cli",
    "engine.doctor",
    "engine.replay_cli",
    "engine.report",
    "engine.plugins.cli",
)


def registrars() -> list[Callable[[Any], None]]:
    """The ``register(subparsers)`` function of every module above."""
    return [importlib.import_module(name).register for name in MODULES]
