"""Grader versions: a digest of a grader's code and settings, stamped on every grade."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from engine.grading.router import RegistryGrader
from engine.testing.harness import ExactGrader
from handlers.catalog import builtin_catalog
from handlers.grading.registry import GraderSpec
from handlers.grading.version import DIGEST_LENGTH, grader_version, modules_digest


def test_a_grader_version_is_stable_and_short() -> None:
    """The same grader under the same settings always gets the same short hex digest."""
    first = grader_version("math", {"numeric_tolerance": 1e-9})
    assert first == grader_version("math", {"numeric_tolerance": 1e-9})
    assert len(first) == DIGEST_LENGTH
    int(first, 16)


def test_changing_a_setting_changes_the_version_and_key_order_does_not() -> None:
    """Settings are part of the version, in one canonical spelling."""
    base = grader_version("math", {"a": 1, "b": [1, 2]})
    assert grader_version("math", {"b": [1, 2], "a": 1}) == base
    assert grader_version("math", {"a": 2, "b": [1, 2]}) != base
    assert grader_version("math") != base
    assert grader_version("math", {}) == grader_version("math", None)


def test_each_built_in_grader_has_its_own_version() -> None:
    """Graders sharing code still differ by name; choice also covers its domain module."""
    names = ["math", "math_verify", "reference", "reference_evolve", "exact", "hendrycks", "choice"]
    assert len({grader_version(name) for name in names}) == len(names)


def test_editing_a_graders_source_changes_its_digest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Any file of the grader's package counts, not only the one holding the function."""
    package = tmp_path / "toy_grader_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "rules.py").write_text("RULES = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = modules_digest(("toy_grader_pkg",))
    (package / "rules.py").write_text("RULES = 2\n")
    modules_digest.cache_clear()
    assert modules_digest(("toy_grader_pkg",)) != before


def test_a_plugin_grader_is_versioned_from_its_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A grader that is not built in needs its function; its module's source is the code."""
    (tmp_path / "toy_plugin_grader.py").write_text("def grade(answer, truth, metadata):\n    return 1.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = __import__("toy_plugin_grader")
    try:
        version = grader_version("toy", grade=module.grade)
        assert version == grader_version("toy", grade=module.grade)
        assert version != grader_version("toy", {"strict": True}, grade=module.grade)
    finally:
        sys.modules.pop("toy_plugin_grader", None)
    with pytest.raises(LookupError, match="not built in"):
        grader_version("toy")


async def test_the_grading_adapter_stamps_name_and_version_on_every_grade() -> None:
    """Built-in graders (through the pool) and plugin graders alike say what graded."""
    def lenient(answer: str, truth: str, metadata: Mapping[str, Any]) -> float:
        return 1.0

    catalog = builtin_catalog().extended(graders=[GraderSpec("lenient", lenient)])
    grader = RegistryGrader(ExactGrader(), catalog=catalog, settings={"numeric_tolerance": 0.1})
    built_in = await grader.grade("42", "42", "exact")
    assert (built_in.score, built_in.grader) == (1.0, "exact")
    assert built_in.grader_version == grader_version("exact", {"numeric_tolerance": 0.1})
    plugin = await grader.grade("41", "42", "lenient")
    assert (plugin.score, plugin.grader) == (1.0, "lenient")
    assert plugin.grader_version == grader_version("lenient", {"numeric_tolerance": 0.1}, grade=lenient)
    unknown = await grader.grade("42", "42", "nope")
    assert (unknown.method, unknown.grader) == ("nope:unknown", "")
