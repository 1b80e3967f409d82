"""`apollo report`: an offline HTML page of plots over runs, a dataset results file or a training log.

Runs come from the event log (ids, prefixes or the run filters), or from the results file
`apollo run` writes (with its ``-rounds.jsonl`` beside it for evolve runs); training
rewards come from a tracker's CSV (``--training``). The plots are drawn by matplotlib as
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

from engine.app.bootstrap import open_runtime
from engine.cli.run_filters import add_run_filter_arguments, run_filter
from engine.cli.run_lookup import pick_run_id
from engine.config.settings import Settings
from engine.errors import EngineError
from handlers.evolve.round_accuracy import round_rows
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
    report.add_argument("--training", type=Path, metavar="CSV", help="a training metrics CSV (step, reward columns)")
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
    training = read_csv(args.training) if args.training else []
    if args.runs or not (args.results or args.training):
        log_results, log_rounds = await _from_log(settings, args)
        results += log_results
        rounds += log_rounds
    data = report_data(results, rounds, training)
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
        args.out.write_text(page, encoding="utf-8")  # noqa: ASYNC240 - one file, after the reads
    except OSError as exc:
        msg = f"cannot write {args.out}: {exc.strerror or exc}"
        raise EngineError(msg) from exc
    print(f"wrote {args.out} ({len(results)} runs, {len(data.training)} training series)", file=sys.stderr)
    return 0


async def _from_log(settings: Settings, args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Results and evolve round rows of the runs named (or matching the filters)."""
    runtime = await open_runtime(settings, start_server=True)
    try:
        ids = await runtime.log.run_ids()
        wanted = [pick_run_id(ids, text) for text in args.runs] if args.runs else ids
        histories = {run_id: await runtime.log.read_run(run_id) for run_id in dict.fromkeys(wanted)}
    finally:
        await runtime.close()
    missing = [run_id for run_id in args.runs if not histories.get(pick_run_id(ids, run_id))]
    if missing:
        msg = f"unknown run {missing[0]!r}: no events recorded"
        raise EngineError(msg)
    kept = {row.run_id for row in select((run_row(i, r) for i, r in histories.items() if r), run_filter(args))}
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
        ("accuracy", "Accuracy per source (error bars: one standard error)", _accuracy_plot if data.sources else None),
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
          "figure{margin:0}svg{max-width:100%;height:auto}.empty p{color:#888}")


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


def _summary(data: ReportData) -> str:
    rows = "".join(f"<tr><td style='text-align:left'>{html.escape(s.source)}</td><td>{s.samples}</td>"
                   f"<td>{s.accuracy:.3f}</td><td>± {s.stderr:.3f}</td></tr>" for s in data.sources)
    incomplete = f"<p>{data.incomplete} sample(s) could not be completed and are left out.</p>" if data.incomplete \
        else ""
    return ("<table><tr><th style='text-align:left'>source</th><th>samples</th><th>accuracy</th><th>SE</th></tr>"
            f"{rows}</table>{incomplete}")


def _accuracy_plot(axes: Any, data: ReportData) -> None:
    names = [s.source for s in data.sources]
    axes.bar(names, [s.accuracy for s in data.sources], yerr=[s.stderr for s in data.sources], capsize=4,
             color="tab:blue")
    axes.set_ylim(0, 1)
    axes.set_ylabel("accuracy")
    for index, source in enumerate(data.sources):
        axes.annotate(f"n={source.samples}", (index, 0.02), ha="center", fontsize=8)


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
