"""Failure reasons of a dataset run: grouped with numbers masked, and told apart by whether a retry can help."""

from __future__ import annotations

from replay.failure_reasons import failure_reasons, render_reasons


def _failed(run_id: str, failure: str) -> dict:
    return {"run_id": run_id, "completed": False, "done_reason": "model_failed", "failure": failure}


def test_reasons_differing_only_in_numbers_are_one_reason_with_its_first_example() -> None:
    """Two context overflows of different lengths count as one reason; completed rows are not reasons."""
    rows = [_failed("r1", "context_length: HTTP 400: 5123 tokens > 4096"),
            _failed("r2", "context_length: HTTP 400: 5301 tokens > 4096"),
            _failed("r3", "timeout: the model server did not answer in time"),
            {"run_id": "ok", "completed": True}, {"run_id": "gone", "status": "not submitted"}]
    reasons = failure_reasons(rows)
    assert [(r.count, r.example_run_id, r.retry_can_help) for r in reasons] == [
        (2, "r1", False), (1, "r3", True), (1, "gone", True)]
    assert reasons[0].reason == "context_length: HTTP 400: 5123 tokens > 4096"


def test_the_advice_splits_failures_a_retry_can_fix_from_those_it_cannot() -> None:
    """A re-run is offered for the timeouts only; the 404s are named as lasting until something changes."""
    rows = [_failed("a", "bad_response: HTTP 404: model 'x' not found")] * 2 + [_failed("b", "timeout: slow")]
    lines = render_reasons(failure_reasons(rows), 5)
    assert lines[0] == "3 of 5 runs could not be completed:"
    assert lines[1].endswith("[a retry fails the same way]") and "(e.g. apollo show a)" in lines[1]
    assert lines[-1].startswith("run the same command again to retry the 1 that may pass; the other 2 fail")
    only_timeouts = render_reasons(failure_reasons([_failed("b", "timeout: slow")]), 1)
    assert only_timeouts[-1] == "run the same command again to retry them"
