"""A tool from a separately installed package is offered, called, recorded and replayable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.app.operations import submission
from engine.plugins import load_plugins
from engine.testing.harness import (
    EchoPython,
    make_settings,
    new_memory_log,
    run_until_done,
    services,
    tool_options,
)
from events import (
    ModelCallRequested,
    RunStarted,
    ToolCallRequested,
    ToolFailed,
    ToolReturned,
    TrajectorySealed,
)
from replay.verify import verify_run
from tests.episode.test_episode_flow import Replies
from tests.plugins.support import ROOT, install_project, on_path, write_package

TOOLS_MODULE = '''
    import asyncio
    import msgspec
    from engine.plugins import Plugin, Tool, tool

    class Point(msgspec.Struct):
        x: float
        y: float

    class Distance(Tool):
        """Euclidean distance of a point from the origin."""
        name = "distance"
        usage = 'Distance from the origin. Body: a JSON object like {"x": 3, "y": 4}.'
        args = Point
        timeout = 2

        async def call(self, args, settings):
            return (args.x ** 2 + args.y ** 2) ** 0.5

    @tool(usage="Repeat a word. Body: JSON {\\"word\\": ..., \\"times\\": 2}.")
    async def repeat(word: str, times: int = 2) -> str:
        return " ".join([word] * times)

    @tool(usage="Always fails.")
    async def broken(text: str) -> str:
        raise RuntimeError("the tool's own bug")

    @tool(usage="Never finishes in time.", timeout=0.05)
    async def sleepy(text: str) -> str:
        await asyncio.sleep(5)
        return "late"

    plugin = Plugin(name="geometry", tools=[Distance, repeat, broken, sleepy])
'''


@pytest.fixture
def geometry(tmp_path: Path):
    site = write_package(tmp_path / "site", "apollo-geometry", {"apollo_geometry.py": TOOLS_MODULE},
                         {"geometry": "apollo_geometry:plugin"})
    with on_path(site):
        yield load_plugins(make_settings())


async def run_with_plugins(replies: list[str], *, settings: dict[str, Any] | None = None, run_id: str = "r-plug"):
    engine_settings = make_settings(settings)
    tools = load_plugins(engine_settings).tool_runners(engine_settings)
    tools["python_code"] = EchoPython()
    log = new_memory_log()
    model = Replies(replies)
    svc = services(engine_settings, models=model, tools=tools)
    await log.append(submission(run_id, "What is 6 times 7?", ground_truth="42"))
    await run_until_done(log, svc, [run_id])
    records = await log.read_run(run_id)
    return [r.event for r in records], records, model


def of(events: list[Any], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


async def test_installed_package_tool_is_used_in_an_episode_and_replay_verifies(tmp_path: Path) -> None:
    """The shipped example package, installed from tmp, adds word_count; the run is recorded and verifies."""
    site = install_project(tmp_path / "site", ROOT / "examples" / "plugins" / "apollo-wordcount")
    with on_path(site):
        load_plugins(make_settings())
        events, records, model = await run_with_plugins([
            "<think>count</think><word_count>one two three</word_count>",
            "<answer>\\boxed{42}</answer>",
        ])
    [started] = of(events, RunStarted)
    assert started.settings["episode"]["tools"] == ["python_code", "word_count"]
    assert "Count the words" in started.settings["tool_usage"]["word_count"]
    assert "<word_count>...</word_count>" in model.prompts[0][-1].content
    [returned] = of(events, ToolReturned)
    assert json.loads(returned.result) == {"result": {"words": 3, "lines": 1, "characters": 13}, "status": "success"}
    assert '"words": 3' in model.prompts[1][-1].content
    [sealed] = of(events, TrajectorySealed)
    assert sealed.reward == 1.0
    result = await verify_run(records)
    assert result.ok, result.first_difference and result.first_difference.describe()


async def test_recorded_tool_list_decides_prompts_even_after_the_plugin_is_gone(tmp_path: Path) -> None:
    """Replay needs no live registry for tools: prompts come from the recorded tool list and usage."""
    site = install_project(tmp_path / "site", ROOT / "examples" / "plugins" / "apollo-wordcount")
    with on_path(site):
        load_plugins(make_settings())
        _, records, _ = await run_with_plugins(["<word_count>a b</word_count>", "<answer>\\boxed{42}</answer>"])
    assert "word_count" not in load_plugins(make_settings()).tools
    assert (await verify_run(records)).ok


async def test_struct_arguments_are_parsed_from_a_json_body(geometry: Any) -> None:
    """A msgspec-Struct tool gets its JSON body decoded into the struct."""
    events, _, _ = await run_with_plugins(['<distance>{"x": 3, "y": 4}</distance>', "<answer>\\boxed{42}</answer>"],
                                          settings={"episode": {"tools": ["distance"]}})
    [returned] = of(events, ToolReturned)
    assert json.loads(returned.result)["result"] == 5.0


@pytest.mark.parametrize(
    "body", ["not json", '{"x": "three", "y": 4}', '{"x": 1}', "[1, 2]", "", "null", '{"x": 1, "y": 2']
)
async def test_broken_tool_json_becomes_an_error_the_model_reads(geometry: Any, body: str) -> None:
    """Garbage arguments give an invalid_arguments result naming the expected fields, not a crash."""
    runner = geometry.tool_runners(make_settings())["distance"]
    result = await runner.run(body, tool_options())
    payload = json.loads(result.text)
    assert (payload["status"], result.score) == ("invalid_arguments", 0.0)
    assert "distance expects one JSON object" in payload["result"]


async def test_function_tool_with_defaults_takes_json_arguments(geometry: Any) -> None:
    """Parameters of a decorated function form the schema; defaults are optional keys."""
    runner = geometry.tool_runners(make_settings())["repeat"]
    assert json.loads((await runner.run('{"word": "ha"}', tool_options())).text)["result"] == "ha ha"
    assert json.loads((await runner.run('{"word": "ha", "times": 3}', tool_options())).text)["result"] == "ha ha ha"


async def test_a_tool_that_raises_returns_an_error_result(geometry: Any) -> None:
    """The plugin's exception is shown to the model as an error result with score 0."""
    result = await geometry.tool_runners(make_settings())["broken"].run("x", tool_options())
    assert json.loads(result.text) == {"result": "Error: RuntimeError: the tool's own bug", "status": "error"}
    assert result.score == 0.0


async def test_a_tool_past_its_timeout_is_recorded_as_failed(geometry: Any) -> None:
    """Running past the tool's own timeout is a recorded tool.failed; the episode goes on."""
    events, _, _ = await run_with_plugins(["<sleepy>zz</sleepy>", "<answer>\\boxed{42}</answer>"],
                                          settings={"episode": {"tools": ["sleepy"]}})
    [failed] = of(events, ToolFailed)
    assert failed.kind == "timeout" and "sleepy" in failed.error
    assert of(events, TrajectorySealed)[0].reward == 1.0


async def test_explicit_tool_list_limits_what_is_offered(geometry: Any) -> None:
    """episode.tools is what the prompt lists; a plugin tool left out is refused if called."""
    events, _, model = await run_with_plugins(["<distance>{\"x\": 1, \"y\": 0}</distance>",
                                               "<answer>\\boxed{42}</answer>"],
                                              settings={"episode": {"tools": ["repeat"]}})
    prompt = model.prompts[0][-1].content
    assert "<repeat>...</repeat>" in prompt and "<distance>" not in prompt and "<python_code>" not in prompt
    assert not of(events, ToolCallRequested)  # distance is not even parsed as a tool this run


async def test_unknown_tool_in_overrides_fails_the_run_clearly(geometry: Any) -> None:
    """A submission asking for an unregistered tool fails with a reason naming it."""
    from events import RunFailed

    log = new_memory_log()
    svc = services(make_settings(), models=Replies([]))
    await log.append(submission("r-bad", "q", config={"episode": {"tools": ["nope"]}}))
    await run_until_done(log, svc, ["r-bad"])
    [failed] = [r.event for r in await log.read_run("r-bad") if isinstance(r.event, RunFailed)]
    assert "unknown tool(s) 'nope'" in failed.reason


async def test_builtin_tools_are_registered_like_plugin_tools(geometry: Any) -> None:
    """python_code and local_rag come out of the same registry, with their usage text."""
    assert {"python_code", "local_rag", "distance"} <= set(geometry.tools)
    assert geometry.tools["python_code"].plugin == "built-in"
    assert geometry.tools["distance"].plugin == "geometry"
    assert geometry.tools["distance"].source == "entry point apollo_geometry:plugin of apollo-geometry 0.1.0"


async def test_first_prompt_requests_list_plugin_usage(geometry: Any) -> None:
    """The policy's first prompt lists every default tool, plugin ones included, with usage."""
    events, _, _ = await run_with_plugins(["<answer>\\boxed{42}</answer>"])
    [request] = of(events, ModelCallRequested)
    text = request.messages[-1].content
    for tag in ("python_code", "distance", "repeat"):
        assert f"<{tag}>...</{tag}>" in text
    assert 'Distance from the origin.' in text


def test_apollo_solve_uses_the_installed_example_tool(tmp_path: Path) -> None:
    """`apollo solve` with the example package installed calls word_count and grades the count."""
    import os
    import subprocess
    import sys

    site = install_project(tmp_path / "site", ROOT / "examples" / "plugins" / "apollo-wordcount")
    env = {**os.environ, "APOLLO_DATA_DIR": str(tmp_path / "data"),
           "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    config = ROOT / "examples" / "plugins" / "apollo-wordcount" / "solve.yaml"
    done = subprocess.run(
        [sys.executable, "-m", "engine", "--config", str(config), "solve",
         "How many words are in 'the quick brown fox jumps'?", "--answer", "5", "--json"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert (result["answer"], result["score"]) == ("5", 1.0), result
