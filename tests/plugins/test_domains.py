"""Task domains: multiple choice end to end, letter normalisation, choices in the dataset."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.app.operations import submission
from engine.datasets import grader_metadata, load_problems
from engine.models.router import ModelRouter
from engine.plugins import RegistryGrader, load_plugins
from engine.testing.harness import (
    ExactGrader,
    make_settings,
    new_memory_log,
    run_until_done,
    services,
)
from events import AnswerGraded, ModelCallRequested, RunStarted, TrajectorySealed
from handlers.domains import MATH, extract_choice, get_domain
from handlers.grading.choice import grade_choice, normalise_choice
from replay.verify import verify_run
from tests.plugins.support import ROOT, on_path, write_package

MCQ = ROOT / "examples" / "mcq"


@pytest.mark.parametrize(("text", "letter"), [
    ("(b)", "B"), ("B.", "B"), ("answer: b", "B"), ("\\boxed{B}", "B"), ("d", "D"),
    ("The answer is C", "C"), ("Answer: (D)", "D"), ("\\text{A}", "A"), ("$\\boxed{\\text{c}}$", "C"),
    ("", None), ("12", None), ("a cat", None), ("none of these", None), ("AB", None), (None, None),
    ("B) 12", None), ("A (wrong)", None), ("A. Actually B.", None), ("(A) or (B)", None), ("A: not sure", None),
    ("**B**", "B"), ("**A** or **B**", None), ("**B** is wrong", None),
])
def test_choice_letters_are_normalised(text: str | None, letter: str | None) -> None:
    """A label alone maps to its upper-case letter; a label with text the choices cannot confirm, or anything
    else, to None."""
    assert normalise_choice(text) == letter


CUBE = ["6", "8", "10", "12"]


@pytest.mark.parametrize(("text", "letter"), [
    ("D) 12", "D"), ("(D) 12", "D"), ("D. 12.", "D"), ("D: $12$", "D"), ("D) 10", None), ("(C) 12", None),
    ("D) 12 edges, I think", None), ("D 12", None),
])
def test_a_label_with_text_is_read_only_when_the_text_is_that_choices_own(text: str, letter: str | None) -> None:
    """``D) 12`` is D when choice D is 12; text that is another choice's, or anything more, leaves it unread."""
    assert normalise_choice(text, CUBE) == letter
    assert normalise_choice(text, dict(zip("ABCD", CUBE, strict=True))) == letter


@given(letter=st.sampled_from("ABCD"), tail=st.text(min_size=1, max_size=30),
       mark=st.sampled_from(["{}) ", "({}) ", "{}. ", "{}: ", "[{}] "]))
def test_a_label_followed_by_anything_but_its_choice_never_scores(letter: str, tail: str, mark: str) -> None:
    """Generated: a label then text with a letter or digit that is not that choice's own scores 0, even
    for the right letter; the choice's own text after it scores 1."""
    choices = ["red", "green", "blue", "black"]
    own = choices["ABCD".index(letter)]
    assert grade_choice(mark.format(letter) + own, letter, {"choices": choices}).score == 1.0
    if any(char.isalnum() for char in tail) and own not in tail:
        assert grade_choice(mark.format(letter) + tail, letter, {"choices": choices}).score == 0.0


def test_choice_grader_compares_letters_and_explains_misses() -> None:
    """Same letter scores 1; a non-letter answer or truth scores 0 and says why."""
    assert grade_choice("(c)", "C", {}).score == 1.0
    assert grade_choice("B", "C", {}).score == 0.0
    assert "not a choice letter" in grade_choice("twelve", "C", {}).detail
    assert grade_choice("B", "12", {"choices": ["10", "12"]}).score == 1.0
    assert "ground truth" in grade_choice("B", "???", {}).detail
    assert "lists no choices" in grade_choice("B) 12", "B", {}).detail
    assert "not that choice's text" in grade_choice("B) 10", "B", {"choices": ["10", "12"]}).detail


def test_choice_extraction_reads_the_answer_block() -> None:
    """The letter comes from the answer block, not from letters in the reasoning."""
    assert extract_choice("<think>A looks wrong</think><answer>B.</answer>", "B.") == "B"
    assert extract_choice("<answer>\\boxed{d}</answer>", "\\boxed{d}") == "D"


def test_dataset_rows_with_choices_list_them_under_the_question() -> None:
    """List and mapping choices are folded into the question text as lettered lines."""
    problems = load_problems(MCQ / "sample.jsonl").problems
    assert problems[0].question.endswith("A. 21\nB. 27\nC. 29\nD. 33")
    assert "C. 5" in problems[4].question
    assert problems[0].ground_truth == "C"


async def test_multiple_choice_sample_is_solved_end_to_end_with_the_shipped_script() -> None:
    """Every sample question is answered by the scripted model and graded correct; runs verify."""
    raw = {"models": {"policy": {"model": "scripted:examples/mcq/script.json"}},
           "episode": {"domain": "multiple_choice", "max_steps": 2}}
    settings = make_settings(raw)
    catalog = load_plugins(settings).catalog()
    log = new_memory_log()
    router = ModelRouter(search_root=ROOT)
    svc = services(settings, models=router, grader=RegistryGrader(ExactGrader(), catalog=catalog))
    problems = load_problems(MCQ / "sample.jsonl").problems
    for problem in problems:
        await log.append(submission(f"mcq-{problem.problem_id}", problem.question, ground_truth=problem.ground_truth,
                                    metadata=grader_metadata(problem)))
    run_ids = [f"mcq-{p.problem_id}" for p in problems]
    await run_until_done(log, svc, run_ids)
    for run_id in run_ids:
        records = await log.read_run(run_id)
        events = [r.event for r in records]
        [graded] = [e for e in events if isinstance(e, AnswerGraded)]
        assert (graded.score, graded.method) == (1.0, "choice"), (run_id, graded)
        [started] = [e for e in events if isinstance(e, RunStarted)]
        assert started.settings["episode"]["grading"] == "choice"
        [request] = [e for e in events if isinstance(e, ModelCallRequested)]
        assert "multiple-choice" in request.messages[-1].content
        assert "\\boxed" not in request.messages[-1].content
        assert (await verify_run(records, catalog=catalog)).ok
    await router.close()


def test_apollo_run_solves_the_multiple_choice_file(tmp_path: Path) -> None:
    """`apollo run --dataset examples/mcq/sample.jsonl` with the shipped config scores 100%."""
    env = {**os.environ, "APOLLO_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run(
        [sys.executable, "-m", "engine", "--config", str(MCQ / "config.yaml"), "run",
         "--dataset", str(MCQ / "sample.jsonl"), "--json"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    overall = json.loads(done.stdout.strip().splitlines()[-1])["overall"]
    assert (overall["finished"], overall["accuracy"]) == (5, 1.0)


async def test_math_stays_the_default_domain() -> None:
    """Without episode.domain a run is math, graded by apollo's math grader, prompts unchanged."""
    assert get_domain(None) is MATH
    assert MATH.grader == "math"
    assert make_settings().episode.domain == "math"


async def test_plugin_domain_with_its_own_grader_runs_an_episode(tmp_path: Path) -> None:
    """A domain and grader from a plugin package choose the prompt, extraction and grade."""
    source = '''
        from engine.plugins import Domain, Grade, Plugin, grader

        def yes_or_no(reply, answer):
            word = (answer or "").strip().lower()
            return word if word in ("yes", "no") else None

        @grader("yes_no")
        def same_word(answer, ground_truth, metadata):
            return Grade(score=float(answer == ground_truth.lower()), method="yes_no")

        plugin = Plugin(name="yesno", graders=[same_word], domains=[Domain(
            name="yes_no", extract=yes_or_no, grader="yes_no",
            intro="You answer yes/no questions.", answer_usage="yes or no, e.g. <answer>yes</answer>.")])
    '''
    site = write_package(tmp_path / "site", "apollo-yesno", {"apollo_yesno.py": source},
                         {"yesno": "apollo_yesno:plugin"})
    from tests.episode.test_episode_flow import Replies

    with on_path(site):
        settings = make_settings({"episode": {"domain": "yes_no"}})
        catalog = load_plugins(settings).catalog()
        log = new_memory_log()
        model = Replies(["<answer> Yes </answer>"])
        svc = services(settings, models=model, grader=RegistryGrader(ExactGrader(), catalog=catalog))
        await log.append(submission("r-yn", "Is 7 prime?", ground_truth="YES"))
        await run_until_done(log, svc, ["r-yn"])
        records = await log.read_run("r-yn")
        assert (await verify_run(records, catalog=catalog)).ok
    events = [r.event for r in records]
    [graded] = [e for e in events if isinstance(e, AnswerGraded)]
    assert (graded.answer, graded.score, graded.method) == ("yes", 1.0, "yes_no")
    assert model.prompts[0][-1].content.startswith("You answer yes/no questions.")
    assert "yes or no, e.g. <answer>yes</answer>." in model.prompts[0][-1].content
    assert next(e for e in events if isinstance(e, TrajectorySealed)).reward == 1.0
    assert json.dumps(events[1].settings)  # recorded settings stay plain JSON
