"""Every gold answer the adversary mutates: the benchmark files and the labelled cases.

Golds are read the way each benchmark publishes them (``../shared/data/README.md``):
AIME/AMC/MATH-500 ``answer`` (AMC's floats as integers when whole, as the dataset
loader does), Minerva's last ``\\boxed{}`` in ``solution``, GSM8K's text after ``####``
with its grouping commas removed. The labelled cases add their ``gold`` and, where the
label is 1, their ``answer`` (a right answer is a gold too). Duplicates are kept once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from handlers.grading.extraction import last_boxed

_REPO = Path(__file__).resolve().parents[3]
DATA_CANDIDATES = (_REPO / "shared" / "data", _REPO.parent / "shared" / "data")
CASES_DIR = _REPO / "tests" / "grading" / "cases"


@dataclass(frozen=True)
class Gold:
    """One gold answer and where it came from (``aime24``, ``cases/adversarial``...)."""

    text: str
    source: str


def data_dir() -> Path | None:
    """The benchmark folder (``shared/data`` beside or above the checkout), if present."""
    return next((path for path in DATA_CANDIDATES if path.is_dir()), None)


def load_golds(data: Path | None = None, cases: Path = CASES_DIR) -> list[Gold]:
    """Every distinct gold, benchmarks first (file name order), then the labelled cases."""
    data = data if data is not None else data_dir()
    seen: set[str] = set()
    golds: list[Gold] = []
    for gold in _chain(data, cases):
        text = gold.text.strip()
        if text and text not in seen:
            seen.add(text)
            golds.append(Gold(text, gold.source))
    return golds


def _chain(data: Path | None, cases: Path) -> Iterator[Gold]:
    if data is not None:
        for path in sorted(data.glob("*.jsonl")):
            for row in _rows(path):
                text = _benchmark_gold(path.stem, row)
                if text is not None:
                    yield Gold(text, path.stem)
    for path in sorted(cases.glob("*.jsonl")):
        for row in _rows(path):
            yield Gold(str(row["gold"]), f"cases/{path.stem}")
            if row.get("label") == 1:
                yield Gold(str(row["answer"]), f"cases/{path.stem}")


def _benchmark_gold(stem: str, row: dict) -> str | None:
    if stem.startswith("minerva"):
        return last_boxed(str(row.get("solution", "")))
    if stem.startswith("gsm8k"):
        answer = str(row.get("answer", ""))
        return answer.rsplit("####", 1)[1].replace(",", "") if "####" in answer else None
    value = row.get("answer")
    if isinstance(value, float):  # AMC publishes 27.0 for 27
        return str(int(value)) if value.is_integer() else repr(value)
    return None if value is None else str(value)


def _rows(path: Path) -> Iterator[dict]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            yield json.loads(line)
