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


def subject_mismatch(subject: str, event: Event) -> str | None:
    """Why ``event`` cannot be the body of a message on ``subject``, or ``None`` when it can.

    Every reader files a message under its subject's run, while the handlers act on the
    body's run id and type: a body that names another run or type would act on a run
    other than the one whose history records it.
    """
    if "." not in event.run_id and subject == subject_for(event):
        return None  # the common case, read off without splitting (a dotted id takes the long way)
    parsed = parse_subject(subject)
    if parsed is None:
        return None  # not a run subject: no run or type to disagree with
    run_id, tag = parsed
    if event.run_id != run_id:
        return f"the body's run_id {event.run_id!r} is not the subject's run {run_id!r}"
    body_tag = tag_of(type(event))
    if body_tag != tag:
        return f"the body's type {body_tag!r} is not the subject's {tag!r}"
    return None


def type_filter(tag: str) -> str:
    """Every run's events of one type (a consumer's filter subject)."""
    return f"{RUN_PREFIX}.*.{tag}"
