"""The fixed-width metrics table."""

from __future__ import annotations

from replay.dataset_scores import SampleResult, compute_metrics, render_table


def _sample(problem: str, index: int, score: float, source: str) -> SampleResult:
    return SampleResult(
        problem_id=problem,
        data_source=source,
        sample_index=index,
        score=score,
        done_reason="answered" if score else "max_steps",
        steps=3,
        tool_calls=4,
        tool_successes=3,
        finished=True,
    )


def _report_text(estimator: str = "first_k") -> str:
    samples = [
        _sample("1", 0, 1.0, "aime24"),
        _sample("1", 1, 0.0, "aime24"),
        _sample("2", 0, 0.0, "aime24"),
        _sample("2", 1, 0.0, "aime24"),
        _sample("9", 0, 1.0, "amc23"),
        _sample("9", 1, 1.0, "amc23"),
    ]
    return render_table(compute_metrics(samples, estimator=estimator))  # type: ignore[arg-type]


def test_table_shows_numbers_per_source_and_total() -> None:
    """Each source and the total appear with their percentages and counts."""
    text = _report_text()
    lines = text.splitlines()
    assert lines[0].split() == [
        "source", "problems", "samples", "finished", "wrong", "failed", "accuracy",
        "avg@2", "pass@2", "tool", "ok", "tool", "calls", "mean", "steps",
    ]  # fmt: skip
    aime = next(line for line in lines if line.startswith("aime24"))
    assert aime.split() == [
        "aime24",
        "2",
        "4",
        "4",
        "3",
        "0",
        "25.00%",
        "25.00%",
        "50.00%",
        "75.00%",
        "12/16",
        "3.00",
    ]
    total = next(line for line in lines if line.startswith("all "))
    assert "50.00%" in total and "66.67%" in total and "18/24" in total


def test_table_columns_line_up() -> None:
    """Header and data rows of the table have the same width."""
    lines = _report_text().splitlines()
    table = lines[: lines.index("")]
    assert len({len(line) for line in table[:2]}) == 1
    assert all(len(line) <= len(table[1]) for line in table)


def test_table_lists_done_reasons() -> None:
    """Done reasons are counted per source under the table."""
    text = _report_text()
    assert "done reasons" in text
    assert "amc23   answered 2" in text
    assert "aime24  max_steps 3, answered 1" in text


def test_table_names_unbiased_estimator() -> None:
    """The unbiased estimator is stated under the table."""
    assert "unbiased estimator" in _report_text("unbiased")


def test_empty_report_renders() -> None:
    """An empty report still renders a header and dashes."""
    text = render_table(compute_metrics([]))
    assert "avg@k" in text
    assert " - " in text or text.count("-") > 5
