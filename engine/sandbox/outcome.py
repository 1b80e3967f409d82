"""The result of one call and its rendering as the reference tool's JSON."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

FINISHED, ERROR, TIMEOUT = "Finished", "Error", "Timeout"


@dataclass(frozen=True)
class SandboxOutcome:
    """What happened to one snippet."""

    stdout: str
    stderr: str
    returncode: int
    run_status: str
    """``Finished`` (exit 0), ``Error`` or ``Timeout``, as in the reference."""
    duration_s: float = 0.0
    cpu_s: float = 0.0
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    killed_for: str | None = None
    """``timeout`` or ``output``, when the sandbox killed the worker."""
    protections: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when the code ran to the end with exit status 0."""
        return self.run_status == FINISHED and self.returncode == 0


def tool_json(outcome: SandboxOutcome) -> tuple[str, float]:
    """The reference's ``text_result`` JSON (``json.dumps``, ASCII-escaped) and its score."""
    if outcome.ok:
        payload: dict[str, Any] = {
            "result": outcome.stdout,
            "stderr": outcome.stderr,
            "status": "success",
            "returncode": 0,
        }
        return json.dumps(payload), 1.0
    payload = {
        "result": outcome.stderr or f"Code execution failed: {outcome.run_status}",
        "stderr": outcome.stderr,
        "status": "failed",
        "returncode": outcome.returncode,
        "run_status": outcome.run_status,
    }
    return json.dumps(payload), 0.0


def empty_code_json() -> tuple[str, float]:
    """The reference's answer to empty or blank code."""
    return json.dumps({"result": "No code provided.", "status": "error"}), 0.0


def exception_json(message: str) -> tuple[str, float]:
    """The reference's answer when the tool itself failed."""
    return json.dumps(
        {"result": f"Exception during python_code execution: {message}", "status": "error"}
    ), 0.0
