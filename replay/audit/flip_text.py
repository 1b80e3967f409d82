"""The flip report as the terminal shows it (``--json`` prints the report's fields instead)."""

from __future__ import annotations

from replay.audit.flips import FlipReport, GradeOutcome, SourceSummary, TrainingStep

SHOWN_FLIPS = 20
"""Flipped grades listed per source and direction; the rest are counted (``--json`` has all)."""
_CLIP = 40


def render_report(report: FlipReport) -> list[str]:
    """The report's lines: what was graded, the accuracy table, the flips, the training steps."""
    lines = [_header(report)]
    if not report.sources:
        return lines
    width = max([len("DATASET"), *(len(s.dataset) for s in report.sources)])
    source_width = max([len("SOURCE"), *(len(s.data_source) for s in report.sources)])
    lines.append(f"{'DATASET':<{width}}  {'SOURCE':<{source_width}}  GRADES  BEFORE  AFTER   0->1  1->0")
    lines += [f"{s.dataset:<{width}}  {s.data_source:<{source_width}}  {s.grades:>6}  {s.accuracy_before:>6.3f}  "
              f"{s.accuracy_after:>6.3f}  {len(s.to_correct):>4}  {len(s.to_wrong):>4}" for s in report.sources]
    for summary in report.sources:
        lines += _flips(summary, "1->0", summary.to_wrong) + _flips(summary, "0->1", summary.to_correct)
    if report.training:
        lines.append("training steps paid a reward that flipped:")
        lines += [f"  {_training(step)}" for step in report.training]
    return lines


def _header(report: FlipReport) -> str:
    graders = ", ".join(f"{name} {version}" for name, version in sorted(report.versions.items())) or "none"
    counts = f"{report.regraded} re-graded now, {report.already} already re-graded at this version"
    kept = f", {report.kept} without an answer (kept at 0)" if report.kept else ""
    return f"graders: {graders}; {counts}{kept}"


def _flips(summary: SourceSummary, label: str, flips: list[GradeOutcome]) -> list[str]:
    if not flips:
        return []
    lines = [f"flipped {label} ({summary.dataset} / {summary.data_source}):"]
    for outcome in flips[:SHOWN_FLIPS]:
        episode = "" if outcome.episode == "main" else f" [{outcome.episode}]"
        change = f"{outcome.old_grader} {outcome.old_score:g} -> {outcome.grader} {outcome.new_score:g}"
        lines.append(f"  {outcome.run_id}{episode}  answer {_quote(outcome.answer)}  gold "
                     f"{_quote(outcome.ground_truth)}  ({change})")
        lines += [f"    trained by {t.trainer} at step {t.step} ({_version(t.policy_version)}, {t.role})"
                  for t in outcome.trained]
    if len(flips) > SHOWN_FLIPS:
        lines.append(f"  ... and {len(flips) - SHOWN_FLIPS} more (--json lists them all)")
    return lines


def _training(step: TrainingStep) -> str:
    versions = ", ".join(f"v{v}" for v in step.policy_versions) or "unversioned"
    ways = [f"{step.to_wrong} paid as right, now wrong"] if step.to_wrong else []
    ways += [f"{step.to_correct} paid as wrong, now right"] if step.to_correct else []
    return f"{step.trainer} step {step.step} (rollouts of policy {versions}): {'; '.join(ways)}"


def _version(version: int | None) -> str:
    return "unversioned" if version is None else f"policy v{version}"


def _quote(text: str | None) -> str:
    """The text as it was written, between quotes: a backslash is shown once, never escaped, so
    ``x \\not= 42`` reads as the model wrote it."""
    if text is None:
        return "-"
    flat = " ".join(text.split())
    return f"'{flat if len(flat) <= _CLIP else flat[: _CLIP - 1] + '…'}'"
