"""Deterministic, subject-safe run and group ids for dataset runs."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.datasets import group_id_for, run_id_for

_SAFE = re.compile(r"[A-Za-z0-9_-]{1,128}")


def test_plain_names_give_readable_ids() -> None:
    """Plain dataset and problem names produce readable ids."""
    assert run_id_for("aime24", "60", 3) == "aime24-60-s3"
    assert group_id_for("aime24", "60") == "aime24-60-g"


def test_run_ids_are_deterministic_and_distinct_per_sample() -> None:
    """The same inputs give the same id; another sample gives another id."""
    assert run_id_for("gsm8k", "12", 0) == run_id_for("gsm8k", "12", 0)
    assert run_id_for("gsm8k", "12", 0) != run_id_for("gsm8k", "12", 1)


def test_ambiguous_names_do_not_collide() -> None:
    """Names whose plain join would coincide get different hashed ids."""
    assert run_id_for("a-b", "c", 0) != run_id_for("a", "b-c", 0)
    assert run_id_for("a.b", "c", 0) != run_id_for("a_b", "c", 0)


def test_long_names_are_hashed_within_limit() -> None:
    """Very long names still give ids of at most 128 subject-safe characters."""
    run_id = run_id_for("d" * 300, "p" * 300, 31)
    assert _SAFE.fullmatch(run_id)
    assert run_id != run_id_for("d" * 300, "p" * 299, 31)


@pytest.mark.parametrize(
    ("dataset", "problem", "sample"), [("", "1", 0), ("x", " ", 0), ("x", "1", -1)]
)
def test_invalid_parts_are_refused(dataset: str, problem: str, sample: int) -> None:
    """Empty names and negative sample indices raise ValueError."""
    with pytest.raises(ValueError):
        run_id_for(dataset, problem, sample)


@given(st.text(min_size=1), st.text(min_size=1), st.integers(min_value=0, max_value=10**6))
def test_any_input_gives_a_subject_safe_id(dataset: str, problem: str, sample: int) -> None:
    """Whatever the names, the id is a valid subject token of at most 128 characters."""
    if not dataset.strip() or not problem.strip():
        return
    assert _SAFE.fullmatch(run_id_for(dataset, problem, sample))
    assert _SAFE.fullmatch(group_id_for(dataset, problem))
