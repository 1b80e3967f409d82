"""The process-pool grader: real grading in workers, deadlines, threads and shutdown."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from engine.grading.pool import ProcessPoolGrader
from handlers.ports import Grade

# Integer exponent towers that sympy tries to evaluate exactly: a grader that never ends.
ENDLESS = "2^2^2^2^2^2"


@pytest.fixture(scope="module")
def grader() -> Iterator[ProcessPoolGrader]:
    """One warm pool shared by the module's tests."""
    pool = ProcessPoolGrader(workers=2)
    pool.start()
    yield pool
    pool.close()


@pytest.mark.parametrize(
    ("answer", "truth", "score"),
    [
        ("\\frac{1}{2}", "0.5", 1.0),
        ("42", "42.0", 1.0),
        ("\\{1, 2\\}", "\\{2, 1\\}", 1.0),
        ("(1, 2)", "(1, 2)", 1.0),
        ("(1, 2)", "(2, 1)", 0.0),
        ("5", "6", 0.0),
    ],
)
async def test_pool_grades_with_math_verify(
    grader: ProcessPoolGrader, answer: str, truth: str, score: float
) -> None:
    """Grades computed in the workers match mathematical equivalence."""
    grade = await grader.grade(answer, truth, "math_verify")
    assert (grade.score, grade.method) == (score, "math_verify")


async def test_pool_grades_in_reference_and_exact_modes(grader: ProcessPoolGrader) -> None:
    """The other modes run through the pool too."""
    assert (await grader.grade("\\boxed{(1,2)}", "(2,1)", "reference")).score == 1.0
    assert (await grader.grade("42", "42", "exact")).score == 1.0


@pytest.mark.parametrize(
    "garbage", ["", "{", "\\boxed{", "}}}{{{", "\u00e9\u200b\ufffd", "1" * 50_000, "\x00"]
)
async def test_pool_scores_garbage_zero(grader: ProcessPoolGrader, garbage: str) -> None:
    """Empty, unbalanced, unicode and huge answers score 0 without breaking the pool."""
    grade = await grader.grade(garbage, "7", "math_verify")
    assert grade.score == 0.0


async def test_concurrent_calls_all_answer(grader: ProcessPoolGrader) -> None:
    """Many simultaneous calls each get their own grade."""
    answers = [str(n) for n in range(12)]
    grades = await asyncio.gather(*(grader.grade(a, "5", "math_verify") for a in answers))
    assert [g.score for g in grades] == [float(a == "5") for a in answers]


def test_pool_works_from_a_non_main_thread(grader: ProcessPoolGrader) -> None:
    """A loop running in a worker thread can grade (math-verify's alarms stay in workers)."""
    results: list[Grade] = []
    thread = threading.Thread(
        target=lambda: results.append(asyncio.run(grader.grade("1/2", "0.5", "math_verify")))
    )
    thread.start()
    thread.join()
    assert [g.score for g in results] == [1.0]


async def test_unknown_mode_raises_before_reaching_a_worker(grader: ProcessPoolGrader) -> None:
    """A bad mode is a configuration error, raised as ValueError."""
    with pytest.raises(ValueError, match="unknown grading mode"):
        await grader.grade("1", "1", "nope")


async def test_timeout_scores_zero_and_replaces_the_pool() -> None:
    """A call past its deadline scores 0, says so, and the next call still works."""
    grader = ProcessPoolGrader(workers=1, timeout_s=1.0)
    try:
        stuck = await grader.grade(ENDLESS, "1", "reference")
        assert (stuck.score, stuck.method) == (0.0, "reference:timeout")
        assert "1 s" in stuck.detail
        assert (await grader.grade("2", "2.0", "math_verify")).score == 1.0
    finally:
        grader.close()


async def test_calls_queued_behind_a_stuck_one_are_retried() -> None:
    """Calls waiting on a pool that gets replaced are retried on the new pool."""
    grader = ProcessPoolGrader(workers=1, timeout_s=2.0)
    try:
        stuck, queued = await asyncio.gather(
            grader.grade(ENDLESS, "1", "reference"), grader.grade("3", "3", "exact")
        )
        assert stuck.method == "reference:timeout"
        assert queued.score == 1.0
    finally:
        grader.close()


async def test_closed_grader_refuses_work() -> None:
    """After close, grading raises RuntimeError; closing twice is harmless."""
    grader = ProcessPoolGrader(workers=1)
    grader.close()
    grader.close()
    with pytest.raises(RuntimeError, match="closed"):
        await grader.grade("1", "1", "exact")
