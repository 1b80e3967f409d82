"""The worked example of every docs/extending guide, written out from the guide and run."""

from __future__ import annotations

import re
from pathlib import Path

from engine.app.operations import submission
from engine.plugins import RegistryGrader, load_plugins
from engine.testing.harness import (
    EchoPython,
    ExactGrader,
    make_settings,
    new_memory_log,
    run_until_done,
    services,
)
from events import AnswerGraded, ToolReturned, TrajectorySealed
from replay.verify import verify_run
from tests.episode.test_episode_flow import Replies
from tests.plugins.support import ROOT, install_project, on_path

GUIDES = ROOT / "docs" / "extending"
_BLOCK = re.compile(r"```(?:python|toml)\n# file: (?P<path>\S+)\n(?P<body>.*?)```", re.DOTALL)


def project_from_guide(name: str, where: Path) -> Path:
    """Every ``# file:`` block of the guide, written under ``where``."""
    blocks = list(_BLOCK.finditer((GUIDES / name).read_text()))
    assert blocks, f"{name} has no '# file:' blocks"
    for block in blocks:
        path = where / block["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(block["body"])
    return where


async def episode(raw: dict, replies: list[str], *, question: str = "What is 6 times 7?", truth: str = "42"):
    settings = make_settings(raw)
    plugins = load_plugins(settings)
    tools = {**plugins.tool_runners(settings), "python_code": EchoPython()}
    log = new_memory_log()
    model = Replies(replies)
    svc = services(settings, models=model, tools=tools, grader=RegistryGrader(ExactGrader(), catalog=plugins.catalog()))
    await log.append(submission("r-guide", question, ground_truth=truth))
    await run_until_done(log, svc, ["r-guide"])
    records = await log.read_run("r-guide")
    assert (await verify_run(records, catalog=plugins.catalog())).ok
    return [r.event for r in records], model


async def test_tool_guide_package_adds_a_tool_the_model_uses(tmp_path: Path) -> None:
    """tool.md: the word_count package installs, is offered, is called, and the run verifies."""
    site = install_project(tmp_path / "site", project_from_guide("tool.md", tmp_path / "project"))
    with on_path(site):
        replies = ["<word_count>the quick brown fox jumps</word_count>", "<answer>\\boxed{42}</answer>"]
        events, model = await episode({"episode": {"tools": ["python_code", "word_count"]}}, replies)
    [returned] = [e for e in events if isinstance(e, ToolReturned)]
    assert '"words": 5' in returned.result
    assert "<word_count>...</word_count>" in model.prompts[0][-1].content


async def test_domain_guide_package_adds_a_yes_no_domain(tmp_path: Path) -> None:
    """domain.md: the yes_no domain reads and grades a yes/no answer with its own prompt."""
    site = install_project(tmp_path / "site", project_from_guide("domain.md", tmp_path / "project"))
    with on_path(site):
        events, model = await episode({"episode": {"domain": "yes_no"}}, ["<answer>Yes.</answer>"],
                                      question="Is 97 prime?", truth="yes")
    [graded] = [e for e in events if isinstance(e, AnswerGraded)]
    assert (graded.answer, graded.score, graded.method) == ("yes", 1.0, "yes_no")
    assert model.prompts[0][-1].content.startswith("You answer yes/no questions")


async def test_grader_guide_package_adds_a_grader_and_a_reward(tmp_path: Path) -> None:
    """grader.md: within_1pct accepts 41.9 for 42 and fewer_steps takes 0.1 off a 2-step run."""
    site = install_project(tmp_path / "site", project_from_guide("grader.md", tmp_path / "project"))
    with on_path(site):
        events, _ = await episode({"episode": {"grading": "within_1pct", "reward": "fewer_steps"}},
                                  ["<python_code>print(6*7)</python_code>", "<answer>\\boxed{41.9}</answer>"])
    [graded] = [e for e in events if isinstance(e, AnswerGraded)]
    [sealed] = [e for e in events if isinstance(e, TrajectorySealed)]
    assert (graded.score, graded.method) == (1.0, "within_1pct")
    assert (sealed.score, sealed.reward) == (1.0, 0.9)
