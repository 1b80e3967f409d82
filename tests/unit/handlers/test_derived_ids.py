"""Derived output ids: the same text as uuid5 over the namespace (recorded logs hold them)."""

from __future__ import annotations

import random
import string
import uuid

from handlers.context import _ID_NAMESPACE, derive_id


def test_derived_ids_are_uuid5_of_cause_handler_and_label() -> None:
    """Derived ids are the UUID5 of cause, handler and label joined by slashes."""
    rng = random.Random(7)
    alphabet = string.printable + "éß漢字🙂/"
    for _ in range(2000):
        parts = ["".join(rng.choices(alphabet, k=rng.randint(0, 40))) for _ in range(3)]
        assert derive_id(*parts) == str(uuid.uuid5(_ID_NAMESPACE, "/".join(parts)))


def test_a_recorded_id_stays_what_it_was() -> None:
    """Pinned: changing how ids are derived would orphan every recorded history."""
    assert derive_id("r1", "start_run", "result") == "5a44d8e5-2cf5-58de-bd87-c201fc8aa929"
    assert uuid.UUID(derive_id("r1", "start_run", "result")).version == 5
