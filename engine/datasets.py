"""Benchmark files (JSON Lines or parquet) turned into validated problems.

Real benchmark files disagree on field names (``problem`` vs ``question``, an
``answer`` field vs an answer hidden in the last ``\\boxed{}`` of a worked
solution, GSM8K's ``#### 42``), so every row goes through one mapping. A bad row
is reported as a :class:`RejectedRow` and loading goes on; only a file that
cannot be a dataset at all raises :class:`DatasetError`.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Final

import msgspec

from engine.errors import EngineError
from handlers.domains.choice import format_choices
from handlers.grading.tokens import matching_brace

MAX_LINE_BYTES: Final = 4 * 1024 * 1024
"""Longer JSONL lines are rejected without being decoded (no benchmark row is that big)."""

QUESTION_PATHS: Final = (
    "extra_info.question", "env_kwargs.question",
    "question", "problem", "prompt", "Problem", "instruction",
)  # fmt: skip
ANSWER_PATHS: Final = (
    "reward_model.ground_truth", "extra_info.ground_truth", "env_kwargs.ground_truth",
    "answer", "ground_truth", "final_answer", "target", "boxed_answer", "solution",
)  # fmt: skip
ID_PATHS: Final = ("id", "idx", "unique_id", "extra_info.index")
SOURCE_PATHS: Final = ("data_source", "extra_info.data_source", "env_kwargs.data_source")

_JSONL_SUFFIXES: Final = frozenset({".jsonl", ".ndjson", ".json"})
_PARQUET_SUFFIXES: Final = frozenset({".parquet", ".pq"})
_CONSUMED_KEYS: Final = frozenset(
    path.split(".")[0] for path in (*QUESTION_PATHS, *ANSWER_PATHS, *SOURCE_PATHS)
) - {"solution"}
"""Fields kept out of metadata; a worked ``solution`` stays in unless it held the answer."""
_UNSAFE_TOKEN_CHARS: Final = re.compile(r"[^A-Za-z0-9_-]")
_PLAIN_PART: Final = re.compile(r"[A-Za-z0-9_]+")
"""Id parts that need no hash: without ``-`` the joined id splits back unambiguously."""
_BOM: Final = b"\xef\xbb\xbf"
_MAX_ID_CHARS: Final = 64
_MAX_RUN_ID_CHARS: Final = 128


class DatasetError(EngineError):
    """The file cannot be used as a dataset at all; the message is one line."""


class Problem(msgspec.Struct, frozen=True, kw_only=True):
    """One benchmark problem, ready to become a ``ProblemSubmitted`` event."""

    problem_id: str
    """Stable within its file; only ``[A-Za-z0-9_-]`` so it fits in a subject token."""
    question: str
    ground_truth: str
    data_source: str
    metadata: dict[str, Any] = {}
    """The row's other fields (JSON-compatible), e.g. ``url``, ``level``, ``solution``."""


GRADER_FIELDS: Final = ("choices",)
"""Row fields a built-in grader reads from the problem's metadata (the ``choice`` grader checks
the text written after a label against ``choices``); a submission carries them along."""


def grader_metadata(problem: Problem) -> dict[str, Any]:
    """The part of ``problem``'s row its grader reads: what a dataset run's submission carries."""
    return {name: problem.metadata[name] for name in GRADER_FIELDS if name in problem.metadata}


class RejectedRow(msgspec.Struct, frozen=True):
    """A row that was skipped, and why."""

    line: int
    """1-based line of a JSONL file, or 1-based row of a parquet file or JSON array."""
    reason: str


class DatasetLoad(msgspec.Struct, frozen=True, kw_only=True):
    """What :func:`load_problems` read: usable problems plus every rejected row."""

    path: str
    name: str
    """The file stem, e.g. ``aime24``; the default ``data_source`` of its problems."""
    format: str
    """``jsonl`` or ``parquet``."""
    problems: list[Problem]
    rejected: list[RejectedRow]
    rows: int
    """Rows read (usable plus rejected); reading stops early when ``limit`` is reached."""


class _RowRejected(EngineError):
    """Internal: raised by the row mapping with the reason a row is unusable."""


def load_problems(
    path: str | Path, *, limit: int | None = None, max_line_bytes: int = MAX_LINE_BYTES
) -> DatasetLoad:
    """Read a JSONL (or JSON array) or parquet benchmark file.

    Args:
        path: the file; its suffix chooses the format.
        limit: stop after this many usable problems.
        max_line_bytes: JSONL lines longer than this are rejected undecoded.

    Returns:
        The usable problems in file order and the rejected rows.

    Raises:
        DatasetError: the file is missing, not JSONL/parquet, or has no usable row.
        ValueError: ``limit`` is not positive.
    """
    if limit is not None and limit < 1:
        msg = f"limit must be a positive number of problems, got {limit}"
        raise ValueError(msg)
    file = _checked_file(Path(path))
    fmt = "parquet" if file.suffix.lower() in _PARQUET_SUFFIXES else "jsonl"
    rows = _parquet_rows(file) if fmt == "parquet" else _json_rows(file, max_line_bytes)
    problems: list[Problem] = []
    rejected: list[RejectedRow] = []
    first_line: dict[str, int] = {}
    count = 0
    try:
        for line, row in rows:
            count += 1
            try:
                problem = _problem_from(row, line - 1, file.stem)
                _check_unique(problem.problem_id, line, first_line)
            except _RowRejected as exc:
                rejected.append(RejectedRow(line, str(exc)))
                continue
            problems.append(problem)
            if limit is not None and len(problems) >= limit:
                break
    except OSError as exc:
        msg = f"cannot read {file}: {_one_line(exc)}"
        raise DatasetError(msg) from exc
    if not problems:
        raise DatasetError(_no_usable_rows_message(file, count, rejected))
    return DatasetLoad(
        path=str(file), name=file.stem, format=fmt, problems=problems, rejected=rejected, rows=count
    )


def run_id_for(
    dataset_name: str, problem_id: str, sample: int, *, settings: str | None = None, attempt: int = 0
) -> str:
    """Deterministic run id of one sample, so re-running a dataset resumes it.

    ``settings`` is the digest of the run settings (:mod:`engine.config.run_identity`): other
    settings, other runs. ``attempt`` numbers the retries of a sample whose earlier run
    could not be completed (``-r1``, ``-r2``...), so the failed run stays in the log.
    Readable (``aime24-1a2b3c4d5e6f-60-s3``) when every name is plain (``[A-Za-z0-9_]``);
    otherwise a sanitised prefix plus a hash of the exact inputs, so two different
    inputs never share an id. At most 128 characters of ``[A-Za-z0-9_-]``.
    """
    if sample < 0 or attempt < 0:
        msg = f"sample index and attempt must be >= 0, got {sample} and {attempt}"
        raise ValueError(msg)
    suffix = f"s{sample}" + (f"-r{attempt}" if attempt else "")
    return _joined_id(_id_parts(dataset_name, problem_id, settings), suffix)


def group_id_for(dataset_name: str, problem_id: str, *, settings: str | None = None) -> str:
    """Deterministic group id shared by all samples of one problem (GRPO groups)."""
    return _joined_id(_id_parts(dataset_name, problem_id, settings), "g")


def _id_parts(dataset_name: str, problem_id: str, settings: str | None) -> list[str]:
    return [dataset_name, problem_id] if settings is None else [dataset_name, settings, problem_id]


def last_boxed_content(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` / ``\\fbox{...}`` (braces matched), or None.

    Also accepts the brace-less ``\\boxed 5`` form. Returns None when there is no box
    or its braces never close.
    """
    start = max(text.rfind("\\boxed"), text.rfind("\\fbox"))
    if start < 0:
        return None
    rest = text[start:].removeprefix("\\boxed").removeprefix("\\fbox")
    if rest.startswith(" ") and not rest.lstrip().startswith("{"):
        return re.split(r"[\s$]", rest.lstrip(), maxsplit=1)[0]
    stripped = rest.lstrip()
    if not stripped.startswith("{"):
        return None
    return _braced(stripped)


def _braced(text: str) -> str | None:
    """Inside of the group opened by ``text[0] == "{"``; escaped braces do not count."""
    end = matching_brace(text, 0)
    return None if end is None else text[1:end]


def _checked_file(path: Path) -> Path:
    try:
        exists, is_file = path.exists(), path.is_file()
    except (OSError, ValueError) as exc:
        msg = f"cannot use dataset path {str(path)!r}: {_one_line(exc)}"
        raise DatasetError(msg) from exc
    if not exists:
        msg = f"dataset file not found: {path}"
        raise DatasetError(msg)
    if not is_file:
        msg = f"dataset path is not a regular file: {path}"
        raise DatasetError(msg)
    suffix = path.suffix.lower()
    if suffix not in _JSONL_SUFFIXES | _PARQUET_SUFFIXES:
        msg = (
            f"unsupported dataset file type {suffix or '(none)'!r} for {path}: "
            "expected .jsonl, .json or .parquet"
        )
        raise DatasetError(msg)
    if path.stat().st_size == 0:
        msg = f"dataset file is empty: {path}"
        raise DatasetError(msg)
    return path


def _json_rows(path: Path, max_line_bytes: int) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """``(line, row)`` pairs; ``row`` is the rejection reason when it is not an object."""
    with path.open("rb") as fh:
        head = fh.read(8192)
        if b"\x00" in head:
            msg = f"{path} is binary, not JSON Lines"
            raise DatasetError(msg)
        fh.seek(0)
        if path.suffix.lower() == ".json" and head.removeprefix(_BOM).lstrip().startswith(b"["):
            yield from _json_array_rows(path, fh)
            return
        line = 0
        while raw := fh.readline(max_line_bytes + 1):
            line += 1
            if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
                _skip_line(fh)
                yield line, f"line is longer than {max_line_bytes} bytes"
                continue
            yield line, _decoded(raw)


def _json_array_rows(path: Path, fh: IO[bytes]) -> Iterator[tuple[int, dict[str, Any] | str]]:
    try:
        items = json.loads(fh.read().removeprefix(_BOM))
    except (ValueError, RecursionError) as exc:
        msg = f"{path} is not valid JSON: {_one_line(exc)}"
        raise DatasetError(msg) from exc
    for index, item in enumerate(items, start=1):
        yield index, item if isinstance(item, dict) else _not_object(item)


def _skip_line(fh: IO[bytes]) -> None:
    while (chunk := fh.readline(1 << 20)) and not chunk.endswith(b"\n"):
        pass


def _decoded(raw: bytes) -> dict[str, Any] | str:
    try:
        text = raw.removeprefix(_BOM).decode("utf-8").strip()
    except UnicodeDecodeError:
        return "line is not valid UTF-8"
    if not text:
        return "blank line"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"not valid JSON: {exc.msg} at column {exc.colno}"
    except (ValueError, RecursionError) as exc:
        return f"not valid JSON: {_one_line(exc)}"
    return value if isinstance(value, dict) else _not_object(value)


def _not_object(value: object) -> str:
    return f"expected a JSON object, got {type(value).__name__}"


def _parquet_rows(path: Path) -> Iterator[tuple[int, dict[str, Any] | str]]:
    import pyarrow as pa  # deferred: heavy, and only parquet files need it
    import pyarrow.parquet as pq

    try:
        reader = pq.ParquetFile(path)
        line = 0
        for batch in reader.iter_batches(batch_size=1024):
            for row in batch.to_pylist():
                line += 1
                yield line, row
    except (pa.ArrowException, OSError) as exc:
        msg = f"{path} is not a readable parquet file: {_one_line(exc)}"
        raise DatasetError(msg) from exc


def _problem_from(row: dict[str, Any] | str, index: int, stem: str) -> Problem:
    if isinstance(row, str):
        raise _RowRejected(row)
    question = with_choices(_question(row), row.get("choices"))
    answer_path, answer = _answer(row)
    source = _first_present(row, SOURCE_PATHS)[1]
    consumed = _CONSUMED_KEYS | ({"solution"} if answer_path == "solution" else set())
    return Problem(
        problem_id=_problem_id(row, index),
        question=question,
        ground_truth=answer,
        data_source=source if isinstance(source, str) and source.strip() else stem,
        metadata={k: _jsonable(v) for k, v in row.items() if k not in consumed},
    )


def with_choices(question: str, choices: object) -> str:
    """A multiple-choice row's question with its ``choices`` listed as ``A. ...`` lines.

    ``choices`` may be a list (lettered in order) or a mapping of letter to text; rows
    without choices keep their question as it is.
    """
    if isinstance(choices, str) or not isinstance(choices, list | tuple | dict) or not choices:
        return question

    return format_choices(question, choices)


def _question(row: dict[str, Any]) -> str:
    path, value = _first_present(row, QUESTION_PATHS)
    if path is None:
        raise _RowRejected("no problem text (looked for " + ", ".join(QUESTION_PATHS) + ")")
    if isinstance(value, list):
        value = _last_user_message(value)
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        msg = f"problem text in {path!r} is not text ({type(value).__name__})"
        raise _RowRejected(msg)
    text = str(value).strip()
    if not text:
        msg = f"problem text in {path!r} is empty"
        raise _RowRejected(msg)
    return text


def _last_user_message(messages: list[Any]) -> object:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return message.get("content")
    return None


def _answer(row: dict[str, Any]) -> tuple[str, str]:
    path, value = _first_present(row, ANSWER_PATHS)
    if path is None:
        raise _RowRejected("no answer (looked for " + ", ".join(ANSWER_PATHS) + ")")
    text = _answer_text(value, path)
    if "####" in text:
        text = text.rsplit("####", 1)[1].strip().replace(",", "")
    if "\\boxed" in text or "\\fbox" in text:
        boxed = last_boxed_content(text)
        if boxed is None:
            msg = f"unclosed or malformed last \\boxed{{}} in {path!r}"
            raise _RowRejected(msg)
        text = boxed.strip()
    elif path == "solution":
        raise _RowRejected("no answer field and no \\boxed{} answer in 'solution'")
    if not text:
        msg = f"answer in {path!r} is empty"
        raise _RowRejected(msg)
    return path, text


def _answer_text(value: object, path: str) -> str:
    if isinstance(value, float):
        if not math.isfinite(value):
            msg = f"answer in {path!r} is not a finite number ({value})"
            raise _RowRejected(msg)
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, list | tuple):
        return "\n".join(_answer_text(item, path) for item in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value).strip()


def _first_present(row: dict[str, Any], paths: tuple[str, ...]) -> tuple[str | None, Any]:
    """First path whose value is not missing, None, blank or an empty container."""
    for path in paths:
        value: Any = row
        for key in path.split("."):
            value = value.get(key) if isinstance(value, dict) else None
        if value is None or (isinstance(value, str | list | dict) and not _has_content(value)):
            continue
        return path, value
    return None, None


def _has_content(value: str | list[Any] | dict[str, Any]) -> bool:
    return bool(value.strip()) if isinstance(value, str) else bool(value)


def _problem_id(row: dict[str, Any], index: int) -> str:
    path, value = _first_present(row, ID_PATHS)
    if path is None or isinstance(value, bool) or not isinstance(value, str | int | float):
        return str(index)
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(index)
        value = int(value) if value.is_integer() else value
    return _token(str(value), _MAX_ID_CHARS)


def _check_unique(problem_id: str, line: int, first_line: dict[str, int]) -> None:
    if problem_id in first_line:
        msg = f"duplicate problem id {problem_id!r} (first used on line {first_line[problem_id]})"
        raise _RowRejected(msg)
    first_line[problem_id] = line


def _token(text: str, max_chars: int) -> str:
    """``text`` with every character outside ``[A-Za-z0-9_-]`` replaced; hashed when long."""
    safe = _UNSAFE_TOKEN_CHARS.sub("_", text.strip())
    if len(safe) <= max_chars:
        return safe
    return f"{safe[: max_chars - 17]}-{_digest(text)}"


def _joined_id(parts: list[str], suffix: str) -> str:
    if any(not part or not part.strip() for part in parts):
        msg = f"id parts must be non-empty, got {parts!r}"
        raise ValueError(msg)
    plain = "-".join([*parts, suffix])
    is_plain = all(_PLAIN_PART.fullmatch(part) for part in parts)
    if is_plain and len(plain) <= _MAX_RUN_ID_CHARS:
        return plain
    prefix = "-".join(_UNSAFE_TOKEN_CHARS.sub("_", part) for part in [*parts, suffix])
    tail = f"-h{_digest(json.dumps([*parts, suffix]))}"
    return prefix[: _MAX_RUN_ID_CHARS - len(tail)] + tail


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _jsonable(value: Any) -> Any:
    """Parquet cells can hold bytes, dates or decimals; events need plain JSON values."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _no_usable_rows_message(path: Path, rows: int, rejected: list[RejectedRow]) -> str:
    detail = f"; line {rejected[0].line}: {rejected[0].reason}" if rejected else ""
    return f"no usable problems in {path} ({rows} rows read{detail})"


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__
