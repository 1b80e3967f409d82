"""The demo's progress bar: steps done, the last reward and loss, seconds per step."""

from __future__ import annotations

import sys
from typing import Any, TextIO

WIDTH = 24


class StepBar:
    """Redrawn in place on a terminal; one line per step elsewhere (logs, CI)."""

    def __init__(self, total: int, *, done: int = 0, stream: TextIO | None = None) -> None:
        self.total = total
        self.done = done
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.draw("starting" if done == 0 else f"resumed after step {done}")

    def advance(self, record: dict[str, Any]) -> None:
        self.done = int(record["step"])
        seconds = record["rollout_s"] + record["train_s"] + record["sync_s"]
        self.draw(f"reward {record['reward_mean']:.2f}  loss {record['loss']:+.4f}  {seconds:.1f} s/step")

    def draw(self, note: str) -> None:
        filled = round(WIDTH * self.done / max(1, self.total))
        line = f"[{'#' * filled}{'.' * (WIDTH - filled)}] {self.done}/{self.total} steps  {note}"
        if self.tty:
            self.stream.write("\r\033[K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
