"""Argparse types for numeric options: one wording of the error for every command line.

Each factory returns a converter for ``type=``; a bad value becomes argparse's usage
error (exit 2, the option named) instead of a traceback.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def whole_number(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An integer option from ``minimum`` up to ``maximum`` (no upper bound when None)."""

    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        _check_range(value, minimum, maximum)
        return value

    return convert


def number(minimum: float) -> Callable[[str], float]:
    """A decimal option of ``minimum`` or more (nan and infinity refused)."""

    def convert(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
        _check_range(value, minimum, None)
        return value

    return convert


def _check_range(value: float, minimum: float, maximum: float | None) -> None:
    if maximum is not None and not minimum <= value <= maximum:
        raise argparse.ArgumentTypeError(f"must be between {minimum:g} and {maximum:g}, not {value:g}")
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be {minimum:g} or more, not {value:g}")
