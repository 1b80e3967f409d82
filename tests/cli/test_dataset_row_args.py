"""`solve`/`submit --from-dataset FILE` with a question or an --answer of the user's own.

`solve --from-dataset gsm8k.jsonl "What is 2+2?"` recorded "What is 2+2?" as gsm8k problem 0,
graded against that row's ground truth (18); `--answer 7` graded row 0 against 7. Either run then
counted as gsm8k problem 0 in `apollo report`. Both are refused now, before anything is submitted.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.support import DATASET, apollo


@pytest.fixture(autouse=True)
def _dataset() -> None:
    if not DATASET.exists():
        pytest.skip(f"{DATASET} is not here")


@pytest.mark.parametrize("command", ["solve", "submit"])
def test_a_question_with_from_dataset_is_a_usage_error_of_the_command(command: str, tmp_path: Path) -> None:
    """QUESTION and --from-dataset together: the command's own usage and one error line, exit 2."""
    code, out, err = apollo(tmp_path / "data", command, "--from-dataset", str(DATASET), "What is 2+2?")
    assert (code, out) == (2, ""), err[-2000:]
    assert err.startswith(f"usage: apollo {command} ")
    assert err.splitlines()[-1] == (f"apollo {command}: error: give a QUESTION or --from-dataset FILE, not both "
                                    "(--from-dataset takes the question of row --index, and its ground truth)")


def test_neither_a_question_nor_from_dataset_gets_the_command_s_usage(tmp_path: Path) -> None:
    """No question at all: solve's usage (not the top-level one) and the error, exit 2."""
    code, _, err = apollo(tmp_path / "data", "solve")
    assert code == 2
    assert err.startswith("usage: apollo solve ")
    assert err.splitlines()[-1] == "apollo solve: error: give a QUESTION or --from-dataset FILE"


def test_an_answer_other_than_the_row_s_ground_truth_is_refused(tmp_path: Path) -> None:
    """--answer that is not the row's ground truth: one line naming both, exit 1, no run recorded."""
    code, out, err = apollo(tmp_path / "data", "solve", "--from-dataset", str(DATASET), "--answer", "7")
    assert (code, out) == (1, ""), err[-2000:]
    assert err.splitlines()[-1] == (f"apollo: error: --answer '7' is not the ground truth of row 0 of {DATASET} "
                                    "('18'): --from-dataset grades against the file's; drop --answer, or give the "
                                    "question itself")
    assert not (tmp_path / "data").exists()
