"""Metric trackers: a CSV file always; TensorBoard and Weights & Biases (offline) when asked for.

Dataset, evolve and training runs call :meth:`Trackers.log` with a step and a flat mapping
of numbers. TensorBoard and W&B are optional extras (``pip install 'apollo-engine[tracking]'``);
asking for one that is not installed is a one-line error before anything runs.
"""

from __future__ import annotations

import csv
import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from engine.errors import EngineError

KINDS = ("tensorboard", "wandb")
"""Trackers besides the CSV file, by the name `--track` takes."""


class Tracker(Protocol):
    def log(self, step: int, metrics: Mapping[str, float]) -> None: ...

    def close(self) -> None: ...


class CsvTracker:
    """One row per step, one column per metric; a metric first seen later widens the file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: list[dict[str, float]] = []
        self.columns: list[str] = ["step"]
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("step\n", encoding="utf-8")
        except OSError as exc:
            msg = f"cannot write metrics to {path}: {exc.strerror or exc}"
            raise EngineError(msg) from exc

    def log(self, step: int, metrics: Mapping[str, float]) -> None:
        row = {"step": step, **metrics}
        self.rows.append(row)
        new = [name for name in metrics if name not in self.columns]
        self.columns += new
        with self.path.open("w" if new else "a", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, self.columns)
            if new:  # rewrite with the wider header; files of metrics stay small
                writer.writeheader()
                writer.writerows(self.rows)
            else:
                writer.writerow(row)

    def close(self) -> None:
        return None


class TensorBoardTracker:
    """Scalars in a TensorBoard event file under ``directory``."""

    def __init__(self, directory: Path) -> None:
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError as exc:
            msg = "--track tensorboard needs tensorboard (and torch): pip install 'apollo-engine[tracking]'"
            raise EngineError(msg) from exc
        self.writer = SummaryWriter(log_dir=str(directory))

    def log(self, step: int, metrics: Mapping[str, float]) -> None:
        for name, value in metrics.items():
            self.writer.add_scalar(name, value, step)
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()


class WandbTracker:
    """A Weights & Biases run in offline mode under ``directory`` (`wandb sync` uploads it later).

    With ``resume``, the run id derives from ``name``: a resumed dataset run logs into the run it
    started (each invocation writes its own offline folder with that id) instead of a new one.
    """

    def __init__(self, directory: Path, *, project: str, name: str, config: Mapping[str, Any],
                 resume: bool = False) -> None:
        try:
            import wandb
        except ImportError as exc:
            msg = "--track wandb needs wandb: pip install 'apollo-engine[tracking]'"
            raise EngineError(msg) from exc
        directory.mkdir(parents=True, exist_ok=True)
        quiet = wandb.Settings(console="off", silent=True)  # the command's own output stays its own
        same_run = {"id": wandb_run_id(name), "resume": "allow"} if resume else {}
        self.run = wandb.init(mode="offline", dir=str(directory), project=project, name=name, config=dict(config),
                              reinit="create_new", settings=quiet, **same_run)

    def log(self, step: int, metrics: Mapping[str, float]) -> None:
        self.run.log(dict(metrics), step=step)

    def close(self) -> None:
        self.run.finish()


class Trackers:
    """The CSV tracker and any others asked for, logged to together."""

    def __init__(self, trackers: Sequence[Tracker], places: Sequence[str] = ()) -> None:
        self.trackers = list(trackers)
        self.last_step = -1
        self.places = list(places)
        """Where the trackers besides the CSV write (``tensorboard: DIR``...), for the command to say."""

    def log(self, step: int, metrics: Mapping[str, Any]) -> None:
        """Log the finite numbers among ``metrics`` (others are dropped); steps never go back."""
        numbers = {name: float(value) for name, value in metrics.items()
                   if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)}
        if not numbers:
            return
        step = max(step, self.last_step)
        self.last_step = step
        for tracker in self.trackers:
            tracker.log(step, numbers)

    def close(self) -> None:
        for tracker in self.trackers:
            tracker.close()


def parse_kinds(text: str) -> list[str]:
    """``--track tensorboard,wandb``: the trackers besides CSV (argparse type)."""
    import argparse

    kinds = [part.strip().lower() for part in text.split(",") if part.strip()]
    unknown = [kind for kind in kinds if kind not in (*KINDS, "csv")]
    if unknown or not kinds:
        msg = f"unknown tracker {unknown[0] if unknown else text!r}: use csv, tensorboard or wandb (comma-separated)"
        raise argparse.ArgumentTypeError(msg)
    return [kind for kind in dict.fromkeys(kinds) if kind != "csv"]


def open_trackers(csv_path: Path, kinds: Sequence[str] = (), *, directory: Path | None = None,
                  name: str = "apollo", config: Mapping[str, Any] | None = None, resume: bool = False) -> Trackers:
    """CSV at ``csv_path`` plus each of ``kinds``, their files under ``directory`` (default: beside the CSV).

    ``resume``: ``name`` names one run however often it is opened (TensorBoard's folder always
    does; W&B gets a run id from it).
    """
    root = directory or csv_path.parent / "tracking"
    trackers: list[Tracker] = [CsvTracker(csv_path)]
    places = []
    for kind in kinds:
        if kind == "tensorboard":
            trackers.append(TensorBoardTracker(root / "tensorboard" / name))
            places.append(f"tensorboard: {root / 'tensorboard' / name} (tensorboard --logdir {root / 'tensorboard'})")
        elif kind == "wandb":
            trackers.append(WandbTracker(root / "wandb", project="apollo", name=name, config=config or {},
                                         resume=resume))
            run = f" as run {wandb_run_id(name)}" if resume else ""
            places.append(f"wandb: offline under {root / 'wandb'}{run} (wandb sync uploads it)")
    return Trackers(trackers, places)


def wandb_run_id(name: str) -> str:
    """A W&B run id for ``name``: its safe characters, and a digest so that distinct names stay distinct."""
    safe = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")[:48]
    return f"{safe}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def flat_numbers(value: Any, prefix: str = "") -> dict[str, float]:
    """The numbers inside nested dicts and lists, keyed ``a/b/0/c`` (metrics reports to scalars)."""
    if isinstance(value, bool):
        return {}
    if isinstance(value, int | float):
        return {prefix: float(value)} if prefix and math.isfinite(value) else {}
    items = value.items() if isinstance(value, Mapping) else enumerate(value) if isinstance(value, list) else ()
    found: dict[str, float] = {}
    for key, inner in items:
        found.update(flat_numbers(inner, f"{prefix}/{key}" if prefix else str(key)))
    return found
