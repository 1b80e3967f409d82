"""`apollo report`: the numbers behind each plot, the page, garbage inputs, and the plots in headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.cli.report import render_report
from replay.report_data import report_data
from tests.cli.support import apollo

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PLOTS = ("accuracy", "scores", "usage", "rounds", "training")


def _results() -> list[dict]:
    """Model m, digest d1: gsm8k 3 of 4 problems right, aime24 0 of 2 right; and a gsm8k problem that could not
    complete."""
    common = {"model": "m", "settings_digest": "d1", "sample": 0, "finished": True, "done_reason": "answer"}
    rows = [{**common, "run_id": f"g-{i}", "problem_id": f"g{i}", "data_source": "gsm8k", "score": float(i < 3),
             "correct": i < 3, "steps": i + 1, "tool_calls": i, "completed": True} for i in range(4)]
    rows += [{**common, "run_id": f"a-{i}", "problem_id": f"a{i}", "data_source": "aime24", "score": 0.0,
              "correct": False, "steps": 4, "tool_calls": 2, "completed": True} for i in range(2)]
    return [*rows, {**common, "run_id": "x", "problem_id": "gx", "data_source": "gsm8k", "score": None,
                    "completed": False, "done_reason": "model_failed"}]


def _rounds() -> list[dict]:
    return [{"branch": branch, "round": r, "correct": float(r >= i)} for i, branch in enumerate(("b0", "b1"))
            for r in range(3)] + [{"branch": "b0", "round": 1, "correct": None}]


def _training() -> list[dict]:
    return [{"step": str(s), "loss": str(1 / (s + 1)), "reward/mean": str(s / 10)} for s in range(10)]


def test_avg_per_source_is_run_s_estimator_and_counts_the_incomplete_sample_as_run_does() -> None:
    """gsm8k: 3 of 5 problems (the failed one counts as wrong, as in `apollo run`), SE over problems
    sd([1,1,1,0,0]) / sqrt(5); aime24 0; the incomplete sample is counted apart too."""
    data = report_data(_results())
    [aime, gsm, total] = data.groups
    assert (gsm.model, gsm.digest, gsm.source, gsm.problems, gsm.finished, gsm.failed) == ("m", "d1", "gsm8k", 5, 4, 1)
    assert gsm.avg_at_k == pytest.approx(0.6) and gsm.avg_se == pytest.approx((0.3 / 5) ** 0.5)
    assert gsm.avg_ci is not None and gsm.avg_ci[0] <= 0.6 <= gsm.avg_ci[1]
    assert (aime.avg_at_k, total.source, total.problems) == (0.0, "all", 7)
    assert data.incomplete == 1 and len(data.scores) == 6 and len(data.runs) == 6


def test_rounds_are_averaged_per_branch_and_training_keeps_reward_columns() -> None:
    """Ungraded rounds are skipped; only reward/score columns of the training CSV are plotted."""
    data = report_data([], _rounds(), _training())
    assert [(r.branch, r.round, r.mean) for r in data.rounds] == [("b0", 0, 1.0), ("b0", 1, 1.0), ("b0", 2, 1.0),
                                                                   ("b1", 0, 0.0), ("b1", 1, 1.0), ("b1", 2, 1.0)]
    assert list(data.training) == ["reward/mean"] and data.training["reward/mean"][-1] == (9.0, 0.9)


def test_page_is_self_contained_with_one_figure_per_plot() -> None:
    """Each plot is inline SVG in its section; nothing is fetched from a network."""
    page = render_report(report_data(_results(), _rounds(), _training()))
    for name in PLOTS:
        assert re.search(rf"<section data-plot='{name}'><h2>[^<]+</h2><figure><svg", page), name
    assert not re.search(r"(src|href)=['\"]https?:", page)


def test_plots_without_data_say_so() -> None:
    """A reasoning-only report has no evolve or training figure, and says so."""
    page = render_report(report_data(_results()))
    assert page.count("<svg") == 3 and page.count("no data") == 2


def test_many_runs_histogram_puts_each_count_over_its_own_tick() -> None:
    """Above MANY_RUNS, a run with 2 steps and 1 tool call gives bars centred within half a unit of 2 and 1."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from engine.cli.report import MANY_RUNS, _usage_plot

    rows = [{"run_id": f"r-{i}", "data_source": "gsm8k", "score": 0.0, "correct": False, "steps": 2,
             "tool_calls": 1, "completed": True} for i in range(MANY_RUNS + 1)]
    axes = Figure().subplots()
    _usage_plot(axes, report_data(rows))
    centres = {}
    for container, label in zip(axes.containers, ("steps", "tool calls"), strict=True):
        [bar] = [patch for patch in container if patch.get_height() > 0]
        centres[label] = bar.get_x() + bar.get_width() / 2
    assert round(centres["steps"]) == 2 and round(centres["tool calls"]) == 1, centres


@pytest.mark.parametrize(("name", "content", "message"), [
    ("bad.jsonl", "not json\n", "bad.jsonl:1: not a JSON object"),
    ("list.jsonl", "[1, 2]\n", "list.jsonl:1: not a JSON object"),
    ("deep.jsonl", "[" * 100000 + "\n", "deep.jsonl:1: not a JSON object"),
    ("binary.jsonl", b"\xff\xfe\x00", "cannot read"),
])
def test_garbage_results_files_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
                                            content: str | bytes, message: str) -> None:
    """An unreadable results file ends with one error line naming it; no page is written."""
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    assert main(["report", "--results", str(path), "--out", str(tmp_path / "r.html")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and not (tmp_path / "r.html").exists()


def test_training_csv_without_a_step_column_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A metrics CSV must have the step column the trackers write; the error lists what it has."""
    path = tmp_path / "m.csv"
    path.write_text("epoch,reward\n1,0.5\n")
    assert main(["report", "--training", str(path), "--out", str(tmp_path / "r.html")]) == 1
    assert "m.csv: no 'step' column (columns: epoch, reward)" in capsys.readouterr().err


@pytest.mark.parametrize(("content", "detail"), [
    ("step,loss\n1,0.5\n", "1 rows; columns: step, loss"),
    ("step,reward\nx,y\n", "1 rows; columns: step, reward"),
    ("step,reward\n", "0 rows; columns: none"),
    ("", "0 rows; columns: none"),
])
def test_training_csv_with_nothing_to_plot_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     content: str, detail: str) -> None:
    """A metrics CSV without a numeric reward or score per step is one line naming the file, not 'nothing matches'."""
    path = tmp_path / "m.csv"
    path.write_text(content)
    assert main(["report", "--training", str(path), "--out", str(tmp_path / "r.html")]) == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert f"m.csv: no row with a numeric step and a reward or score column to plot ({detail})" in line
    assert not (tmp_path / "r.html").exists()


def test_a_missing_results_file_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A results file that is not there is named in the one error line."""
    assert main(["report", "--results", str(tmp_path / "none.jsonl")]) == 1
    assert f"cannot read {tmp_path / 'none.jsonl'}" in capsys.readouterr().err


def test_report_from_a_results_file_and_its_rounds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--results F` reads F and F's -rounds.jsonl beside it; `--training` adds the reward plot."""
    results = tmp_path / "gsm8k-evolve.jsonl"
    results.write_text("".join(json.dumps(row) + "\n" for row in _results()))
    (tmp_path / "gsm8k-evolve-rounds.jsonl").write_text("".join(json.dumps(row) + "\n" for row in _rounds()))
    training = tmp_path / "train.csv"
    training.write_text("step,reward/mean\n" + "".join(f"{s},{s / 10}\n" for s in range(5)))
    page = tmp_path / "r.html"
    assert main(["report", "--results", str(results), "--training", str(training), "--out", str(page)]) == 0
    assert page.read_text().count("<svg") == 5 and f"wrote {page}" in capsys.readouterr().err


def test_report_of_runs_in_the_log_takes_prefixes(two_runs: Path, tmp_path: Path) -> None:
    """Runs named by prefix are read from the log; an ambiguous prefix is one line."""
    page = tmp_path / "runs.html"
    code, _, err = apollo(two_runs, "report", "solve-abc", "solve-abd", "--out", str(page))
    assert code == 0, err[-2000:]
    assert "(2 runs in 1 model/settings group(s), 0 training series)" in err and page.read_text().count("<svg") == 3
    code, _, err = apollo(two_runs, "report", "solve-ab", "--out", str(page))
    assert code == 1 and "run id prefix 'solve-ab' is ambiguous" in err
    code, _, err = apollo(two_runs, "report", "no-such-run", "--out", str(page))
    assert code == 1 and "unknown run 'no-such-run'" in err
    code, _, err = apollo(two_runs, "report", "--model", "no-such-model", "--out", str(page))
    assert code == 1 and "nothing to report: no finished runs or training rows match" in err


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")
def test_headless_chromium_renders_every_plot(tmp_path: Path) -> None:
    """Chromium loads the page offline: each section holds a drawn SVG, and the screenshot shows the bars' colour."""
    from matplotlib.image import imread

    page = tmp_path / "report.html"
    page.write_text(render_report(report_data(_results(), _rounds(), _training())), encoding="utf-8")
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    dom = subprocess.run([*command, "--dump-dom", page.as_uri()],  # fixed arguments
                         capture_output=True, text=True, timeout=60, check=False)
    assert dom.returncode == 0, dom.stderr[-2000:]
    for name in PLOTS:
        section = dom.stdout.split(f'data-plot="{name}"')[1].split("</section>")[0]
        assert "<svg" in section and "<path" in section, name
    shot = tmp_path / "shot.png"
    done = subprocess.run([*command, f"--screenshot={shot}", "--window-size=1000,2800", page.as_uri()],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    pixels = imread(str(shot))[:, :, :3]
    blue = (abs(pixels[:, :, 0] - 0x1F / 255) < 0.03) & (abs(pixels[:, :, 1] - 0x77 / 255) < 0.03) & (
        abs(pixels[:, :, 2] - 0xB4 / 255) < 0.03)
    assert blue.sum() > 5000  # the accuracy and usage bars are drawn in tab:blue
