"""The offline HTML timeline: self-contained, shows steps, renders in headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from replay.timeline_html import render_html
from tests.replay.support import golden

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def test_page_has_no_external_assets() -> None:
    """Nothing is loaded from a network: no src/href to http(s) and no CDN links."""
    page = render_html([golden("good_code_then_answer")])
    assert not re.search(r"(src|href)=['\"]https?:", page)
    assert "<style>" in page and "<script>" in page


def test_page_shows_prompts_completions_tool_output_and_state() -> None:
    """Every step, the prompt and completion texts, the tool output and states are on the page."""
    page = render_html([golden("good_code_then_answer")])
    assert "Step 1" in page and "Step 2" in page
    assert "print(6*7)" in page and "RESULT=42" in page and "What is 6 times 7?" in page
    assert "state after this step" in page and "episode = " in page


def test_several_runs_share_one_page_as_columns() -> None:
    """Two runs become two columns; a fork links to its parent column."""
    page = render_html([golden("good_code_then_answer"), golden("good_invalid_code_answer")])
    assert page.count("<section class='run'") == 2


def test_markup_in_model_text_is_escaped() -> None:
    """A completion containing HTML is shown as text, never interpreted."""
    import msgspec

    records = golden("good_code_then_answer")
    records[3] = msgspec.structs.replace(records[3], event=msgspec.structs.replace(
        records[3].event, text="<script>alert(1)</script><img src=x onerror=alert(2)>"))
    page = render_html([records])
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page


def test_empty_inputs_render_a_page() -> None:
    """No runs, or an empty run, still give a valid page."""
    assert "<html>" in render_html([])
    assert "(empty run)" in render_html([[]])


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")
def test_headless_chromium_renders_the_steps(tmp_path: Path) -> None:
    """Headless Chromium loads the page offline and its DOM holds every step."""
    page = tmp_path / "timeline.html"
    page.write_text(render_html([golden("good_invalid_code_answer")]), encoding="utf-8")
    result = subprocess.run(  # fixed arguments
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    dom = result.stdout
    for step in (1, 2, 3):
        assert f"data-step=\"{step}\"" in dom and f"Step {step}" in dom
    assert "model.responded" in dom
