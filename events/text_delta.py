"""Prompts recorded as what changed since the previous one, resolved exactly on read.

An episode's prompt at step k repeats most of step k-1's (the instructions, the problem,
the steps still in the window). Recording it whole at every step makes a run's bytes grow
with the square of its turns; recording it as a :class:`MessageDelta` per message keeps
them linear. A delta is a list of *pieces*: a literal string, or ``[start, end]``, the
characters ``base[start:end]`` of the same message in the base prompt. Concatenating the
pieces gives the message back, character for character: :func:`apply_pieces` checks every
range and raises :class:`DeltaError` rather than guess.

Deltas are made from line-level matches (the shared head and tail, then greedy runs of
equal lines), so their size follows the lines that changed and making one is linear.
:func:`delta_messages` verifies each delta before returning it and records the prompt
whole whenever a delta would not be smaller.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from events.errors import EventError
from events.model import ChatMessage, MessageDelta, MessagesDelta, Piece

MIN_COPY: Final = 24
"""Shorter matches are written literally: a range costs about this much on the wire."""


class DeltaError(ValueError, EventError):
    """A recorded delta that does not resolve: a range outside its base, or no base at all."""


def text_pieces(base: str, new: str) -> list[Piece]:
    """Pieces that rebuild ``new`` from ``base`` (ranges for the lines they share).

    The shared head and tail (whole lines) are found by direct comparison, which is all a
    typical next step needs; the lines between are matched greedily (:func:`_middle_pieces`).
    """
    if base == new:
        return [(0, len(base))] if base else []
    head = _shared_head(base, new)
    tail = _shared_tail(base[head:], new[head:])
    pieces: list[Piece] = []
    if head >= MIN_COPY:
        pieces.append((0, head))
    elif head:
        pieces.append(new[:head])
    _middle_pieces(pieces, base, head, len(base) - tail, new[head:len(new) - tail])
    if tail >= MIN_COPY:
        _add_range(pieces, len(base) - tail, len(base))
    elif tail:
        _add_text(pieces, new[len(new) - tail:])
    return pieces


def _middle_pieces(pieces: list[Piece], base: str, start: int, end: int, new: str) -> None:
    """Append pieces for ``new`` against ``base[start:end]`` (offsets into the whole base).

    Greedy and linear: each new line that continues the current run of base lines extends
    it; otherwise the run restarts at the base line (of its first few occurrences) from
    which the longest run follows. Runs shorter than :data:`MIN_COPY` are written literally.
    """
    old_lines = base[start:end].splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    old_starts = _starts(old_lines, start)
    where: dict[str, list[int]] = {}
    for number, line in enumerate(old_lines):
        where.setdefault(line, []).append(number)
    written = 0  # characters of ``new`` already given by pieces
    at = 0  # offset in ``new`` of line ``j``
    j = 0
    while j < len(new_lines):
        first = _longest_run_start(old_lines, new_lines, j, where.get(new_lines[j], ()))
        if first is None:
            at += len(new_lines[j])
            j += 1
            continue
        length = 0
        while j + length < len(new_lines) and first + length < len(old_lines) \
                and old_lines[first + length] == new_lines[j + length]:
            length += 1
        size = old_starts[first + length] - old_starts[first]
        if size >= MIN_COPY:
            if at > written:
                _add_text(pieces, new[written:at])
            _add_range(pieces, old_starts[first], old_starts[first + length])
            written = at + size
        at += size
        j += length
    if len(new) > written:
        _add_text(pieces, new[written:])


def _longest_run_start(old: list[str], new: list[str], j: int, candidates: Sequence[int]) -> int | None:
    """Of the first few base lines equal to ``new[j]``, the one the longest run of equal lines follows."""
    best, best_length = None, 0
    for first in candidates[:8]:
        length = 1
        while j + length < len(new) and first + length < len(old) and old[first + length] == new[j + length]:
            length += 1
        if length > best_length:
            best, best_length = first, length
    return best


def _shared_head(a: str, b: str) -> int:
    """Length of the longest common prefix of ``a`` and ``b`` that ends a line (or either text)."""
    low, high = 0, min(len(a), len(b))
    while low < high:  # binary search on slice equality: each comparison is one C memcmp
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    if low in (len(a), len(b)):
        return low
    return a.rfind("\n", 0, low) + 1


def _shared_tail(a: str, b: str) -> int:
    """Length of the longest common suffix of ``a`` and ``b`` that starts a line (or either text)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[len(a) - mid:] == b[len(b) - mid:]:
            low = mid
        else:
            high = mid - 1
    if low in (len(a), len(b)):
        return low
    cut = a.find("\n", len(a) - low)  # keep the tail from the start of a whole line
    return len(a) - cut - 1 if cut != -1 else 0


def apply_pieces(base: str, pieces: Sequence[Piece]) -> str:
    """The text ``pieces`` describe against ``base``.

    Raises:
        DeltaError: a range is not inside ``base`` (a corrupt or foreign record).
    """
    parts = []
    for piece in pieces:
        if isinstance(piece, str):
            parts.append(piece)
            continue
        start, end = piece
        if not 0 <= start <= end <= len(base):
            msg = f"delta range [{start}, {end}] is outside its base of {len(base)} characters"
            raise DeltaError(msg)
        parts.append(base[start:end])
    return "".join(parts)


def delta_messages(base: Sequence[ChatMessage], new: Sequence[ChatMessage]) -> MessagesDelta | None:
    """``new`` as changes from ``base``: its leading messages equal to the base's are kept,
    each later one is a delta of the base message at the same index (whole when there is
    none); None when writing ``new`` whole is as small, and the caller records it whole."""
    kept = 0
    while kept < min(len(base), len(new)) and base[kept] == new[kept]:
        kept += 1
    deltas = []
    saved = sum(len(message.content) for message in new[:kept])
    for index in range(kept, len(new)):
        message = new[index]
        against = base[index].content if index < len(base) else ""
        pieces = text_pieces(against, message.content)
        if apply_pieces(against, pieces) != message.content:  # never record what does not rebuild
            return None
        saved += len(message.content) - _wire_size(pieces)
        deltas.append(MessageDelta(role=message.role, pieces=pieces))
    return MessagesDelta(kept=kept, messages=deltas) if saved > 0 else None


def resolve_messages(base: Sequence[ChatMessage], delta: MessagesDelta) -> list[ChatMessage]:
    """The messages ``delta`` describes against ``base``.

    Raises:
        DeltaError: it keeps more messages than the base has, or a range is outside its base message.
    """
    if not 0 <= delta.kept <= len(base):
        msg = f"delta keeps {delta.kept} messages of a base of {len(base)}"
        raise DeltaError(msg)
    out = list(base[:delta.kept])
    for index, message in enumerate(delta.messages, start=delta.kept):
        against = base[index].content if index < len(base) else ""
        out.append(ChatMessage(role=message.role, content=apply_pieces(against, message.pieces)))
    return out


def _starts(lines: list[str], first: int) -> list[int]:
    """Character offset of each line (the first at ``first``), and of the end."""
    starts = [first]
    for line in lines:
        starts.append(starts[-1] + len(line))
    return starts


def _add_range(pieces: list[Piece], start: int, end: int) -> None:
    last = pieces[-1] if pieces else None
    if isinstance(last, tuple) and last[1] == start:
        pieces[-1] = (last[0], end)
    else:
        pieces.append((start, end))


def _add_text(pieces: list[Piece], text: str) -> None:
    if pieces and isinstance(pieces[-1], str):
        pieces[-1] += text
    else:
        pieces.append(text)


def _wire_size(pieces: Sequence[Piece]) -> int:
    return sum(len(p) + 3 if isinstance(p, str) else 16 for p in pieces)
