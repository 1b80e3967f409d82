"""Built-in graders live in one table: the grading modes, the pool and the versions all read it."""

from __future__ import annotations

import pickle

from handlers.grading import GRADING_MODES, grade_answer
from handlers.grading.dispatch import POOLED_SPECS as _POOLED
from handlers.grading.registry import BUILTIN_GRADERS
from handlers.grading.version import BUILTIN_SOURCES


def test_the_grading_modes_are_the_pooled_graders_of_the_table() -> None:
    """`grade_answer`'s modes are exactly the table's pooled graders, in its order."""
    assert tuple(spec.name for spec in BUILTIN_GRADERS if spec.pooled) == GRADING_MODES


def test_the_pool_runs_the_table_s_own_functions() -> None:
    """The pool's (and grade_answer's) graders are the table's specs (not a second list of modes)."""
    assert {name: spec.grade for name, spec in _POOLED.items()} == {
        spec.name: spec.grade for spec in BUILTIN_GRADERS if spec.pooled}


def test_every_pooled_grader_can_travel_to_a_worker_process() -> None:
    """Each pooled grade function pickles by name (a closure would not reach the pool's workers)."""
    for spec in BUILTIN_GRADERS:
        if spec.pooled:
            assert pickle.loads(pickle.dumps(spec.grade)) is spec.grade, spec.name


def test_every_built_in_grader_is_versioned_from_its_own_sources() -> None:
    """Versions cover each built-in grader's declared source modules, and no grader is missed."""
    assert set(BUILTIN_SOURCES) == {spec.name for spec in BUILTIN_GRADERS}
    assert all(BUILTIN_SOURCES[spec.name] == spec.sources and spec.sources for spec in BUILTIN_GRADERS)


def test_grade_answer_goes_through_the_table() -> None:
    """A mode's grade is the table function's grade, an empty answer included."""
    for spec in BUILTIN_GRADERS:
        if spec.pooled:
            assert grade_answer("\\boxed{5}", "5", spec.name) == spec.grade("\\boxed{5}", "5", {})
            assert grade_answer("", "5", spec.name).detail == "no answer"
