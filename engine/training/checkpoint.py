"""Checkpoints of the demo trainer: trained weights, optimiser state and the subscription cursor.

Only the weights training changes are saved (the LoRA adapters: megabytes, not the whole model).

Each step writes a new folder ``step-NNNN`` (weights, optimiser) and only then replaces
``latest.json`` (step, policy version, cursor, folder) in one rename, so a crash at any
point leaves the previous checkpoint whole and the cursor never runs ahead of the weights.
The folder of the previous step is kept until the next one is recorded (a ``policy.updated``
may still name it); older ones are removed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import msgspec

from engine.training.trainer import trainable_state
from replay.training import TrainingCursor

LATEST = "latest.json"
WEIGHTS = "model.pt"
OPTIMIZER = "optimizer.pt"


class CheckpointState(msgspec.Struct, frozen=True, kw_only=True):
    step: int
    """Optimiser steps taken."""
    version: int
    """Policy version of these weights (the step count: version 0 is the untrained model)."""
    folder: str
    """Folder name, relative to the checkpoint directory."""
    cursor: TrainingCursor
    trained: list[str] = msgspec.field(default_factory=list)
    """Every trajectory id trained so far, in order (the cursor may be pruned; this is not)."""
    record: dict[str, Any] = msgspec.field(default_factory=dict)
    """The step's metrics line, rewritten on restart if the kill came before it was written."""


def step_folder(directory: Path, step: int) -> Path:
    return directory / f"step-{step:04d}"


def read_latest(directory: Path) -> CheckpointState | None:
    path = directory / LATEST
    if not path.exists():
        return None
    return msgspec.json.decode(path.read_bytes(), type=CheckpointState)


def save(directory: Path, state: CheckpointState, model: Any, optimizer: Any) -> Path:
    """Write the step's folder, then point ``latest.json`` at it; returns the folder."""
    # deferred: torch is the train extra's
    import torch

    folder = directory / state.folder
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(trainable_state(model), folder / WEIGHTS)
    torch.save(optimizer.state_dict(), folder / OPTIMIZER)
    _fsync_dir(folder)
    tmp = directory / (LATEST + ".tmp")
    tmp.write_bytes(msgspec.json.encode(state))
    with tmp.open("rb") as handle:
        os.fsync(handle.fileno())
    os.replace(tmp, directory / LATEST)
    _fsync_dir(directory)
    _remove_older(directory, keep={state.folder, _previous(directory, state.folder)})
    return folder


def load_weights(folder: Path) -> dict[str, Any]:
    # deferred: torch is the train extra's
    import torch

    return torch.load(folder / WEIGHTS, weights_only=True, map_location="cpu")


def restore(directory: Path, state: CheckpointState, model: Any, optimizer: Any) -> None:
    # deferred: torch is the train extra's
    import torch

    folder = directory / state.folder
    load_into(model, load_weights(folder))
    optimizer.load_state_dict(torch.load(folder / OPTIMIZER, weights_only=True, map_location="cpu"))


def load_into(model: Any, state: dict[str, Any]) -> None:
    """Load a checkpoint's weights (the trainable ones: adapters under LoRA) into ``model``."""
    missing = set(state) - set(model.state_dict())
    if missing:
        msg = f"the checkpoint has weights this model lacks: {sorted(missing)[:3]}"
        raise ValueError(msg)
    model.load_state_dict(state, strict=False)


def _previous(directory: Path, current: str) -> str:
    older = sorted(p.name for p in directory.glob("step-*") if p.is_dir() and p.name < current)
    return older[-1] if older else ""


def _remove_older(directory: Path, keep: set[str]) -> None:
    for path in directory.glob("step-*"):
        if path.is_dir() and path.name not in keep:
            shutil.rmtree(path, ignore_errors=True)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
