"""A reply cut at max_tokens and a call retried after a timeout are marked on the terminal and
HTML timelines, not only in `--json` (issue 31, item 10)."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path

import pytest

from tests.cli.engine_support import fake_model_server
from tests.cli.support import apollo

pytestmark = [pytest.mark.nats, pytest.mark.slow, pytest.mark.timeout(300)]

SHORT_AND_IMPATIENT = ("models:\n  policy:\n    timeout: 2\n    max_retries: 2\n    max_tokens: 40\n"
                       "episode:\n  max_steps: 1\n")
"""Attempts give up after 2 s, and every reply of the demo script is longer than 40 tokens."""


def _plan(url: str, *faults: str) -> None:
    body = json.dumps({"plan": list(faults)}).encode()
    request = urllib.request.Request(url.removesuffix("/v1") + "/fake/plan", data=body, method="POST")
    with urllib.request.urlopen(request, timeout=10):
        pass


@pytest.fixture(scope="module")
def cut_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir holding ``solve-marks``: its first attempt hangs (timeout, retried), its reply comes back cut."""
    folder = tmp_path_factory.mktemp("marks")
    config = folder / "impatient.yaml"
    config.write_text(SHORT_AND_IMPATIENT)
    data = folder / "data"
    with fake_model_server() as model:
        _plan(model.url, "hang")
        _, out, _ = apollo(data, "solve", "What is 2+3?", "--answer", "5", "--model", "fake-model",
                           "--model-url", model.url, "--config", str(config), "--no-probe", "--run-id", "solve-marks")
    (folder / "solve.out").write_text(out)
    return data


def test_a_cut_off_and_retried_reply_is_marked_in_show_and_on_the_page(cut_run: Path, tmp_path: Path) -> None:
    """Both marks on the reply's `apollo show` line and on its row of the HTML page."""
    code, out, err = apollo(cut_run, "show", "solve-marks")
    assert code == 0, err[-2000:]
    [reply] = [line for line in out.splitlines() if "model.responded" in line]
    assert re.search(r"\[CUT OFF at the token limit(, \d+ tokens)?\] \[RETRIED x1 after timeout\]", reply), reply
    page = tmp_path / "t.html"
    code, _, err = apollo(cut_run, "show", "solve-marks", "--html", str(page))
    assert code == 0, err[-2000:]
    html = page.read_text()
    assert re.search(r"<span class='mark'>CUT OFF at the token limit(, \d+ tokens)?</span>", html)
    assert "<span class='mark'>RETRIED x1 after timeout</span>" in html


def test_a_run_that_ended_without_an_answer_says_so_not_none(cut_run: Path) -> None:
    """The cut reply held no answer: the run's last line reads `no answer`, never Python's None."""
    code, out, err = apollo(cut_run, "show", "solve-marks")
    assert code == 0, err[-2000:]
    [ended] = [line for line in out.splitlines() if "run.completed" in line]
    assert "no answer" in ended and "None" not in ended
    solved = (cut_run.parent / "solve.out").read_text()  # solve's own summary says it the same way
    assert "answer:  no answer" in solved and "(none)" not in solved
