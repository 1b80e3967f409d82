"""The only place that formats and parses NATS subjects."""

from __future__ import annotations

from typing import Final

from events.base import Event, tag_of

STREAM: Final = "APOLLO"
ROOT: Final = "apollo"
RUN_PREFIX: Final = f"{ROOT}.run"
ALL_RUNS: Final = f"{RUN_PREFIX}.>"
SEALED_TRAJECTORIES: Final = f"{RUN_PREFIX}.*.trajectory.sealed"


def subject_for(event: Event) -> str:
    """``apollo.run.<run_id>.<tag>``; the tag's dots become subject tokens."""
    return f"{RUN_PREFIX}.{event.run_id}.{tag_of(type(event))}"


def subject_for_tag(run_id: str, tag: str) -> str:
    return f"{RUN_PREFIX}.{run_id}.{tag}"


def run_filter(run_id: str) -> str:
    """Every event of one run."""
    return f"{RUN_PREFIX}.{run_id}.>"


def parse_subject(subject: str) -> tuple[str, str] | None:
    """``(run_id, tag)`` of a run subject, or ``None`` when it is not one."""
    parts = subject.split(".")
    if len(parts) < 4 or parts[0] != ROOT or parts[1] != "run":
        return None
    return parts[2], ".".join(parts[3:])
