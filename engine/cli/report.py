"""`apollo report`: an offline HTML page of plots over runs, a dataset results file or a training log.

Runs come from the event log (ids, prefixes or the run filters), or from the results file
`apollo run` writes (with its ``-rounds.jsonl`` beside it for evolve runs); training
rewards come from a tracker's CSV or the ``metrics.jsonl`` of `apollo train --demo`
(``--training``). Accuracy is given per model and settings digest, with `apollo run`'s
estimator and interval (:mod:`replay.report_groups`). The plots are drawn by matplotlib as
inline SVG, so the page needs nothing from a network.
"""

from __future__ import annotations

import argparse
import csv
import html
import io
import json
import sys
from pathlib import Path
from typing import Any

import msgspec

from engine.app.bootstrap import open_runtime
from engine.cli.run_filters import add_run_filter_arguments, run_filter
from engine.cli.run_lookup import open_run_index, pick_indexed
from engine.cli.run_reads import read_runs
from engine.config.settings import Settings
from engine.errors import EngineError
from handlers.evolve.round_accuracy import round_rows
from replay.dataset_scores import OVERALL
from replay.report_data import ReportData, report_data
from replay.results import result_row
from replay.run_table import run_row, select

MANY_RUNS = 40
"""Above this many runs, steps and tool calls are shown as histograms instead of one bar per run."""


def register(subparsers: Any) -> None:
    report = subparsers.add_parser("report", help="an HTML report with plots of runs, a results file or training",
                                   description="Write an offline HTML page of plots: accuracy per source, score "
                                               "distribution, steps and tool use per run, evolve score per round "
                                               "and branch, training reward per step.")
    report.add_argument("runs", nargs="*", metavar="RUN", help="runs (ids or prefixes); default: every run that "
                                                                "matches the filters")
    report.add_argument("--results", type=Path, metavar="FILE", help="a results JSONL of `apollo run` instead")
    report.add_argument("--training", type=Path, metavar="FILE",
                        help="training metrics: a tracker's CSV or train --demo's metrics.jsonl (step and reward)")
    report.add_argument("--out", type=Path, default=Path("report.html"), help="page to write (default report.html)")
    add_run_filter_arguments(report)
    report.set_defaults(handler=_cmd_report)


async def _cmd_report(args: argparse.Namespace, settings: Settings) -> int:
    results: list[dict[str, Any]] = []
    rounds: list[dict[str, Any]] = []
    if args.results:
        results = read_jsonl(args.results)
        beside = args.results.with_name(args.results.stem + "-rounds.jsonl")
        rounds = read_jsonl(beside) if beside.exists() else []
    training = read_training(args.training) if args.training else []
    if args.runs or not (args.results or args.training):
        log_results, log_rounds = await _from_log(settings, args)
        results += log_results
        rounds += log_rounds
    data = report_data(results, rounds, training)
    data = msgspec.structs.replace(data, incomplete=samples_not_completed(data, results))
    if args.training and not data.training:
        columns = ", ".join(map(str, training[0])) if training else "none"
        msg = (f"{args.training}: no row with a numeric step and a reward or score column to plot "
               f"({len(training)} rows; columns: {columns})")
        raise EngineError(msg)
    if not (data.scores or data.runs or data.rounds or data.training or data.incomplete):
        msg = "nothing to report: no finished runs or training rows match"
        raise EngineError(msg)
    page = render_report(data, title=_title(args))
    try:
        args.out.write_text(page, encoding="utf-8")  # one file, after the reads
    except OSError as exc:
        msg = f"cannot write {args.out}: {exc.strerror or exc}"
        raise EngineError(msg) from exc
    groups = len({(g.model, g.digest) for g in data.groups})
    print(f"wrote {args.out} ({len(results)} runs in {groups} model/settings group(s), {len(data.training)} "
          "training series)", file=sys.stderr)
    return 0


def samples_not_completed(data: ReportData, results: list[dict[str, Any]]) -> int:
    """Samples the page counts as not completed: the groups' failed ones (a retried sample's latest
    attempt only, as the table counts it), and runs never submitted, which no group holds."""
    grouped = sum(group.failed for group in data.groups if group.source != OVERALL)
    ungrouped = sum(1 for row in results if not isinstance(row.get("problem_id"), str)
                    and (row.get("completed") is False or row.get("status") == "not submitted"))
    return grouped + ungrouped


async def _from_log(settings: Settings, args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Results and evolve round rows of the runs named (or matching the filters).

    The index of runs picks them; only their histories are read.
    """
    runtime = await open_runtime(settings, start_server=True, quiet=True)
    try:
        index = await open_run_index(runtime.log, settings)
        try:
            named = {text: pick_indexed(index, text) for text in args.runs}
            newest_first = [] if args.runs else await index.rows(run_filter(args))
            chosen = None if args.runs else [row.run_id for row in reversed(newest_first) if row.events]
        finally:
            index.close()
        wanted = list(dict.fromkeys(named.values())) if chosen is None else chosen
        histories = await read_runs(runtime.log, wanted)
    finally:
        await runtime.close()
    missing = [text for text, run_id in named.items() if not histories.get(run_id)]
    if missing:
        msg = f"unknown run {missing[0]!r}: no events recorded"
        raise EngineError(msg)
    if chosen is None:  # named runs: the filters narrow them too
        kept = {row.run_id for row in select((run_row(i, r) for i, r in histories.items() if r), run_filter(args))}
    else:
        kept = set(chosen)
    events = {run_id: [r.event for r in records] for run_id, records in histories.items() if run_id in kept}
    return ([result_row(run_id, history) for run_id, history in events.items()],
            [row for run_id, history in events.items() for row in round_rows(run_id, history)])


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Rows of a JSON-lines file; a line that is not a JSON object is an error naming it."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        msg = f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}"
        raise EngineError(msg) from exc
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            msg = f"{path}:{number}: not a JSON object: {exc}"
            raise EngineError(msg) from exc
        if not isinstance(row, dict):
            msg = f"{path}:{number}: not a JSON object"
            raise EngineError(msg)
        rows.append(row)
    return rows


def read_training(path: Path) -> list[dict[str, Any]]:
    """Training rows: JSON lines (``metrics.jsonl`` of `apollo train --demo`) or a tracker's CSV."""
    if path.suffix == ".jsonl":
        rows = read_jsonl(path)
        if rows and not any("step" in row for row in rows):
            msg = f"{path}: no 'step' field (fields: {', '.join(map(str, rows[0]))})"
            raise EngineError(msg)
        return rows
    return read_csv(path)


def read_csv(path: Path) -> list[dict[str, Any]]:
    """Rows of a metrics CSV with a ``step`` column (what the CSV tracker writes)."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        msg = f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}"
        raise EngineError(msg) from exc
    if rows and "step" not in rows[0]:
        msg = f"{path}: no 'step' column (columns: {', '.join(map(str, rows[0]))})"
        raise EngineError(msg)
    return rows


def _title(args: argparse.Namespace) -> str:
    named = [str(args.results)] if args.results else []
    named += [str(args.training)] if args.training else []
    named += args.runs[:3] + ([f"{len(args.runs) - 3} more"] if len(args.runs) > 3 else [])
    return "apollo report" + (f": {', '.join(named)}" if named else "")


# -- the page ----------------------------------------------------------------------------


def render_report(data: ReportData, *, title: str = "apollo report") -> str:
    """A self-contained HTML page: a summary, then one figure per plot that has data."""
    plt = _pyplot()
    sections = [
        ("accuracy", "Avg@k per model, settings digest and source (error bars: 95% bootstrap interval over "
                     "problems)", _accuracy_plot if _measured(data) else None),
        ("scores", "Score distribution", _score_plot if data.scores else None),
        ("usage", "Steps and tool calls per run", _usage_plot if data.runs else None),
        ("rounds", "Evolve score per round and branch", _rounds_plot if data.rounds else None),
        ("training", "Training reward per step", _training_plot if data.training else None),
    ]
    body = [f"<h1>{html.escape(title)}</h1>", _summary(data)]
    for name, caption, draw in sections:
        if draw is None:
            body.append(f"<section data-plot='{name}' class='empty'><h2>{caption}</h2><p>no data</p></section>")
            continue
        figure, axes = plt.subplots(figsize=(8, 4))
        try:
            draw(axes, data)
            figure.tight_layout()
            svg = _svg(figure)
        finally:
            plt.close(figure)
        body.append(f"<section data-plot='{name}'><h2>{caption}</h2><figure>{svg}</figure></section>")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{_STYLE}</style></head><body>{''.join(body)}</body></html>")


_STYLE = ("body{font-family:sans-serif;margin:2em;max-width:60em}section{margin:2em 0}"
          "table{border-collapse:collapse}td,th{padding:.2em .8em;border-bottom:1px solid #ddd;text-align:right}"
          "figure{margin:0}svg{max-width:100%;height:auto}.empty p{color:#888}"
          ".groups{font-size:.85em}.groups td{white-space:nowrap}"
          ".groups td:nth-child(-n+3),.groups th:nth-child(-n+3){text-align:left}")


def _pyplot() -> Any:
    try:
        import matplotlib as mpl
    except ImportError as exc:
        msg = "apollo report needs matplotlib: pip install 'apollo-engine[report]'"
        raise EngineError(msg) from exc
    mpl.use("Agg")  # no display: draw to files only
    import matplotlib.pyplot as plt

    return plt


def _svg(figure: Any) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg")
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # drop the XML prolog and doctype: the SVG sits inline in the page


SUMMARY_COLUMNS = ("model", "settings digest", "source", "problems", "samples", "finished", "failed", "Avg@k",
                   "95% CI", "SE", "Pass@k", "95% CI")


def _summary(data: ReportData) -> str:
    """One row per model, settings digest and source: `apollo run`'s figures, ``n/a`` without a completed sample."""
    cells = [[g.model, g.digest, g.source, str(g.problems), str(g.samples), str(g.finished), str(g.failed),
              f"{_pct(g.avg_at_k)} (k={g.k})", _interval(g.avg_ci),
              "n/a" if g.avg_at_k is None else "-" if g.avg_se is None else f"{100 * g.avg_se:.2f}",
              _pct(g.pass_at_k), _interval(g.pass_ci)] for g in data.groups]
    head = "".join(f"<th>{html.escape(name)}</th>" for name in SUMMARY_COLUMNS)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in cells)
    incomplete = (f"<p>{data.incomplete} sample(s) could not be completed: Avg@k and Pass@k count them as wrong, "
                  "and a group with none completed has no figure (n/a).</p>") if data.incomplete else ""
    note = ("<p>SE over problems, in points; CI: percentile bootstrap over problems, 2000 resamples, seed 0 "
            "(as <code>apollo run</code> prints them). Runs started one by one (solve, submit, fork) record no "
            "settings digest and are grouped per model as single runs.</p>")
    return f"<table class='groups'><tr>{head}</tr>{rows}</table>{incomplete}{note}"


def _short_model(model: str) -> str:
    """``Qwen/Qwen2.5-7B`` -> ``Qwen2.5-7B``; ``scripted:examples/scripted/demo.json`` -> ``scripted:demo.json``."""
    prefix = "scripted:" if model.startswith("scripted:") else ""
    return prefix + model.removeprefix(prefix).rstrip("/").rsplit("/", 1)[-1]


def _measured(data: ReportData) -> bool:
    return any(g.avg_at_k is not None for g in data.groups)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}%"


def _interval(bounds: tuple[float, float] | None) -> str:
    return "n/a" if bounds is None else f"[{100 * bounds[0]:.2f}, {100 * bounds[1]:.2f}]"


def _accuracy_plot(axes: Any, data: ReportData) -> None:
    shown = [g for g in data.groups if g.avg_at_k is not None and g.avg_ci is not None]
    means = [g.avg_at_k or 0.0 for g in shown]
    below = [mean - g.avg_ci[0] for mean, g in zip(means, shown, strict=True) if g.avg_ci]
    above = [g.avg_ci[1] - mean for mean, g in zip(means, shown, strict=True) if g.avg_ci]
    axes.bar(range(len(shown)), means, yerr=[below, above], capsize=4, color="tab:blue")
    labels = [f"{_short_model(g.model)}\n{g.digest}\n{g.source}" for g in shown]
    axes.set_xticks(range(len(shown)), labels, fontsize=7)
    axes.set_ylim(0, 1)
    axes.set_ylabel("Avg@k")
    for index, group in enumerate(shown):
        axes.annotate(f"k={group.k}, {group.problems} problems", (index, 0.02), ha="center", fontsize=7)


def _score_plot(axes: Any, data: ReportData) -> None:
    axes.hist(data.scores, bins=min(20, max(2, len(set(data.scores)) * 2)), color="tab:green", edgecolor="white")
    axes.set_xlabel("score")
    axes.set_ylabel("samples")


def _usage_plot(axes: Any, data: ReportData) -> None:
    steps = [run.steps for run in data.runs]
    tools = [run.tool_calls for run in data.runs]
    if len(data.runs) > MANY_RUNS:
        top = max([*steps, *tools, 1])
        # one bin per whole number, centred on it, so each pair of bars straddles its tick
        axes.hist([steps, tools], bins=[k - 0.5 for k in range(top + 2)], label=["steps", "tool calls"],
                  color=["tab:blue", "tab:orange"])
        axes.xaxis.get_major_locator().set_params(integer=True)
        axes.set_xlabel("per run")
        axes.set_ylabel("runs")
    else:
        places = range(len(data.runs))
        axes.bar([p - 0.2 for p in places], steps, width=0.4, label="steps", color="tab:blue")
        axes.bar([p + 0.2 for p in places], tools, width=0.4, label="tool calls", color="tab:orange")
        axes.set_xticks(list(places), [run.run_id[-14:] for run in data.runs], rotation=60, ha="right", fontsize=7)
    axes.legend()


def _rounds_plot(axes: Any, data: ReportData) -> None:
    for branch in dict.fromkeys(score.branch for score in data.rounds):
        points = [score for score in data.rounds if score.branch == branch]
        axes.plot([p.round for p in points], [p.mean for p in points], marker="o", label=branch)
    axes.set_xlabel("round")
    axes.set_ylabel("mean grade")
    axes.set_ylim(-0.05, 1.05)
    axes.legend()


def _training_plot(axes: Any, data: ReportData) -> None:
    for name, points in data.training.items():
        axes.plot([step for step, _ in points], [value for _, value in points], label=name)
    axes.set_xlabel("step")
    axes.set_ylabel("reward")
    axes.legend()
