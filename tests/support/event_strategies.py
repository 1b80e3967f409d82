"""Hypothesis strategies for events as they exist in memory (shared by the property tests).

Registering them sets hypothesis's strategies for these types process-wide: aware datetimes,
finite floats (JSON has no NaN) and turns without a prompt delta. Wire-only fields
(events/wire_form.py) stay empty: an event in memory never carries a turn's delta, and a
request's delta comes with its whole messages (tests/unit/events/test_prompt_deltas.py covers
the wire forms).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hypothesis import strategies as st

from events.episode import Turn
from events.model import ModelCallRequested

aware_datetimes = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC))

WIRE_ONLY: dict[type, dict[str, Any]] = {ModelCallRequested: {"prompt_delta": st.none()}}
"""Per event type, the field strategies that keep wire-only fields empty (pass to ``st.builds``)."""


def register_event_strategies() -> None:
    """Make ``st.builds(event_type)`` draw events as they exist in memory."""
    st.register_type_strategy(datetime, aware_datetimes)
    st.register_type_strategy(float, st.floats(allow_nan=False, allow_infinity=False))
    st.register_type_strategy(Turn, st.builds(Turn, prompt_delta=st.none()))
