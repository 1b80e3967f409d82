"""grading.numeric_tolerance: off by default, set in the config, used by the pool, part of the version."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.config.settings import ConfigError, load_settings
from engine.grading.pool import ProcessPoolGrader
from handlers.grading.version import grader_version


def test_the_tolerance_is_off_unless_the_config_sets_it(tmp_path: Path) -> None:
    """The numeric tolerance is off unless the config file sets it."""
    assert load_settings(environ={}).grading.numeric_tolerance is None
    config = tmp_path / "apollo.yaml"
    config.write_text("grading:\n  numeric_tolerance: 0.0001\n")
    settings = load_settings(config, environ={})
    assert settings.grading.numeric_tolerance == pytest.approx(1e-4)
    assert settings.grading.as_settings() == {"numeric_tolerance": 1e-4}


@pytest.mark.parametrize("value", ["-1", "2", "'lots'"])
def test_a_tolerance_that_is_not_a_small_positive_number_is_refused(tmp_path: Path, value: str) -> None:
    """A numeric tolerance that is not a small positive number is refused as a config error."""
    config = tmp_path / "apollo.yaml"
    config.write_text(f"grading:\n  numeric_tolerance: {value}\n")
    with pytest.raises(ConfigError, match="numeric_tolerance"):
        load_settings(config, environ={})


async def test_the_pool_compares_numerically_only_when_asked() -> None:
    """The grading pool compares numerically only when given a tolerance."""
    strict, tolerant = ProcessPoolGrader(workers=1), ProcessPoolGrader(workers=1, numeric_tolerance=1e-4)
    try:
        assert (await strict.grade("3.1416", "\\pi", "math")).score == 0.0
        grade = await tolerant.grade("3.1416", "\\pi", "math")
        assert grade.score == 1.0 and "numeric_tolerance" in grade.detail
    finally:
        strict.close()
        tolerant.close()


def test_the_tolerance_changes_the_grader_version() -> None:
    """Setting a numeric tolerance changes the grader version."""
    assert grader_version("math", {}) != grader_version("math", {"numeric_tolerance": 1e-4})
