"""Every plugin test starts and ends with no plugin installed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine.plugins import forget


@pytest.fixture(autouse=True)
def _no_plugins_left_over() -> Iterator[None]:
    forget()
    yield
    forget()
