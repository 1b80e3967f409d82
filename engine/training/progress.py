"""The demo's progress bar: steps done, the last reward and loss, seconds per step."""

from __future__ import annotations

from typing import Any, TextIO

from engine.console.status_line import StatusLine, bar

WIDTH = 24


class StepBar:
    """Redrawn in place on a terminal; one line per step elsewhere (logs, CI)."""

    def __init__(self, total: int, *, done: int = 0, stream: TextIO | None = None) -> None:
        self.total = total
        self.done = done
        self.status = StatusLine(stream)
        self.draw("starting" if done == 0 else f"resumed after step {done}")

    def advance(self, record: dict[str, Any]) -> None:
        self.done = int(record["step"])
        seconds = record["rollout_s"] + record["train_s"] + record["sync_s"]
        self.draw(f"reward {record['reward_mean']:.2f}  loss {record['loss']:+.4f}  {seconds:.1f} s/step")

    def draw(self, note: str) -> None:
        self.status.show(f"{bar(self.done, self.total, WIDTH)} {self.done}/{self.total} steps  {note}", force=True)

    def close(self) -> None:
        self.status.end()
