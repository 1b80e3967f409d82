"""The demo's record of each step: ``metrics.jsonl`` (one JSON object a line) and ``reward.png``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

METRICS_FILE = "metrics.jsonl"
PLOT_FILE = "reward.png"


def append(directory: Path, record: dict[str, Any]) -> None:
    """Add one step's line (flushed: a killed run keeps every finished step)."""
    with (directory / METRICS_FILE).open("a", encoding="utf-8") as out:
        out.write(json.dumps(record, sort_keys=True) + "\n")
        out.flush()


def read(directory: Path) -> list[dict[str, Any]]:
    """Every recorded step; a line cut short by a kill is left out."""
    path = directory / METRICS_FILE
    if not path.exists():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


def plot(directory: Path, records: list[dict[str, Any]]) -> Path:
    """Mean reward and loss per step, one panel each."""
    # deferred: matplotlib is slow to import and only needed here
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [r["step"] for r in records]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    top.plot(steps, [r["reward_mean"] for r in records], marker="o", color="tab:green")
    top.set_ylabel("mean reward")
    top.set_ylim(-0.05, 1.05)
    top.grid(alpha=0.3)
    top.set_title("apollo train --demo: GRPO on SmolLM2-135M-Instruct")
    bottom.plot(steps, [r["loss"] for r in records], marker="o", color="tab:blue")
    bottom.set_ylabel("policy loss")
    bottom.set_xlabel("optimiser step")
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    path = directory / PLOT_FILE
    tmp = directory / (PLOT_FILE + ".tmp.png")
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    tmp.replace(path)
    return path
