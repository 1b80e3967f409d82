"""A bad plugin stops the engine with one line naming it; nothing starts half-configured."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.app.bootstrap import build_services, open_runtime
from engine.errors import ConfigError
from engine.plugins import PluginError, load_plugins
from engine.plugins.loader import loaded
from engine.testing.harness import make_settings
from tests.plugins.support import ROOT, on_path, write_package

GOOD = '''
    from engine.plugins import Domain, Plugin, grader

    @grader("always")
    def always(answer, ground_truth, metadata):
        return 1.0

    plugin = Plugin(name="good", graders=[always],
                    domains=[Domain(name="yesno", extract=lambda reply, answer: answer, grader="always")])
'''

BAD = {
    "duplicate_tag": ('''
        from engine.plugins import tool

        @tool(usage="shadows the sandbox")
        async def python_code(code: str) -> str:
            return code
     ''', "duplicate tool tag 'python_code': already registered by built-in"),
    "import_error": ('''
        raise RuntimeError("boom at import")
     ''', "cannot be imported: RuntimeError: boom at import"),
    "sync_tool": ('''
        from engine.plugins import tool

        @tool(usage="not async")
        def shout(text: str) -> str:
            return text.upper()
     ''', "must be an async function"),
    "untyped_args": ('''
        from engine.plugins import tool

        @tool(usage="x")
        async def add(a, b: int) -> int:
            return a + b
     ''', "parameter 'a' needs a type annotation"),
    "call_signature": ('''
        from engine.plugins import Tool

        class Lookup(Tool):
            name = "lookup"
            usage = "look something up"
            async def call(self):
                return 1
     ''', "Lookup.call must accept (self, args, settings)"),
    "bad_json_schema": ('''
        from engine.plugins import Tool

        class Lookup(Tool):
            name = "lookup"
            usage = "look something up"
            args = {"type": "object", "properties": {"q": {"type": "text"}}}
            async def call(self, args, settings):
                return 1
     ''', "JSON schema property 'q' needs a 'type'"),
    "grader_arity": ('''
        from engine.plugins import grader

        @grader("loose")
        def loose(answer):
            return 1.0
     ''', "grader 'loose' must accept (answer, ground_truth, metadata)"),
    "plain_function": ('''
        async def helper(text: str) -> str:
            return text
     ''', "is a plain function: decorate it with @tool"),
    "no_usage": ('''
        from engine.plugins import tool

        @tool()
        async def silent(text: str) -> str:
            return text
     ''', "has no usage text"),
    "reserved_tag": ('''
        from engine.plugins import tool

        @tool(name="answer", usage="x")
        async def answer(text: str) -> str:
            return text
     ''', "not a usable tag"),
    "domain_without_grader": ('''
        from engine.plugins import Domain

        target = Domain(name="orphan", extract=lambda reply, answer: answer, grader="missing")
     ''', "names grader 'missing', which no plugin registers"),
}


ATTRIBUTES = {
    "duplicate_tag": "python_code",
    "import_error": "anything",
    "sync_tool": "shout",
    "untyped_args": "add",
    "call_signature": "Lookup",
    "bad_json_schema": "Lookup",
    "grader_arity": "loose",
    "plain_function": "helper",
    "no_usage": "silent",
    "reserved_tag": "answer",
    "domain_without_grader": "target",
}
"""The object each bad module's entry point names."""


def bad_site(tmp_path: Path, case: str) -> Path:
    source, _ = BAD[case]
    attribute = ATTRIBUTES[case]
    files = {"good_plugin.py": GOOD, f"bad_{case}.py": source}
    return write_package(tmp_path / "site", "apollo-mixed", files,
                         {"good": "good_plugin:plugin", case: f"bad_{case}:{attribute}"})


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_plugin_gives_one_error_naming_it(tmp_path: Path, case: str) -> None:
    """Each kind of broken plugin raises PluginError with the plugin's name, source and problem."""
    with on_path(bad_site(tmp_path, case)), pytest.raises(PluginError) as caught:
        load_plugins(make_settings())
    message = str(caught.value)
    assert message.startswith(f"plugin '{case}' (entry point bad_{case}:"), message
    assert BAD[case][1] in message
    assert "\n" not in message


def test_failed_load_installs_nothing(tmp_path: Path) -> None:
    """The good plugin next to a bad one is not installed either: all or nothing."""
    with on_path(bad_site(tmp_path, "duplicate_tag")):
        with pytest.raises(PluginError):
            load_plugins(make_settings())
        assert loaded() is None or "yesno" not in loaded().catalog().domains


def test_duplicate_between_two_plugins_names_both(tmp_path: Path) -> None:
    """Two plugins registering one tag: the error names the second and the first's owner."""
    source = '''
        from engine.plugins import tool

        @tool(usage="x")
        async def echo(text: str) -> str:
            return text
    '''
    site = write_package(tmp_path / "site", "apollo-twins", {"one.py": source, "two.py": source},
                         {"one": "one:echo", "two": "two:echo"})
    with on_path(site), pytest.raises(PluginError, match=r"plugin 'two' .*duplicate tool tag 'echo': "
                                                           r"already registered by plugin 'one'"):
        load_plugins(make_settings())


def test_config_import_path_that_does_not_exist_is_named() -> None:
    """plugins: entries that cannot be imported are reported with the path."""
    with pytest.raises(PluginError, match=r"plugin 'no_such_pkg.tools:Thing' \(config plugins\): cannot be imported"):
        load_plugins(make_settings({"plugins": ["no_such_pkg.tools:Thing"]}))
    with pytest.raises(PluginError, match=r"expected 'package\.module:attribute'"):
        load_plugins(make_settings({"plugins": ["just_a_module"]}))


def test_services_refuse_to_build_with_a_bad_plugin(tmp_path: Path) -> None:
    """build_services raises before creating any model client, pool or tool."""
    with on_path(bad_site(tmp_path, "import_error")), pytest.raises(PluginError):
        build_services(make_settings())


async def test_runtime_does_not_start_a_server_with_a_bad_plugin(tmp_path: Path) -> None:
    """open_runtime fails first: no embedded server is started, no state file written."""
    settings = make_settings({"data_dir": str(tmp_path / "data")})
    with on_path(bad_site(tmp_path, "sync_tool")), pytest.raises(PluginError):
        await open_runtime(settings, start_server=True)
    assert not (tmp_path / "data" / "engine.json").exists()


@pytest.mark.parametrize(("episode", "message"), [
    ({"domain": "chemistry"}, "episode.domain: unknown domain 'chemistry'"),
    ({"tools": ["python_code", "wolfram"]}, "episode.tools: unknown tool(s) 'wolfram'"),
    ({"grading": "vibes"}, "episode.grading: unknown grader 'vibes'"),
    ({"reward": "bonus"}, "episode.reward: unknown reward 'bonus'"),
])
def test_settings_naming_unregistered_extensions_refuse_to_start(episode: dict, message: str) -> None:
    """A config that names a missing domain, tool, grader or reward is a ConfigError at start-up."""
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build_services(make_settings({"episode": episode}))


def _apollo(args: list[str], site: Path | None, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "APOLLO_DATA_DIR": str(tmp_path / "data")}
    if site is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT)])
    return subprocess.run([sys.executable, "-m", "engine", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=60, check=False)


def test_apollo_plugins_exits_1_with_one_line_on_a_bad_plugin(tmp_path: Path) -> None:
    """`apollo plugins` prints one error line naming the plugin and exits 1."""
    done = _apollo(["plugins"], bad_site(tmp_path, "duplicate_tag"), tmp_path)
    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("apollo: error: plugin 'duplicate_tag'")


def test_apollo_plugins_lists_what_is_loaded_and_from_where(tmp_path: Path) -> None:
    """`apollo plugins --json` shows built-ins and each plugin's extensions with their source."""
    import json

    site = write_package(tmp_path / "site", "apollo-good", {"good_plugin.py": GOOD}, {"good": "good_plugin:plugin"})
    done = _apollo(["plugins", "--json"], site, tmp_path)
    assert done.returncode == 0, done.stderr
    listing = json.loads(done.stdout)
    rows = {(e["kind"], e["name"]): e for e in listing["extensions"]}
    assert rows[("tool", "python_code")]["plugin"] == "built-in"
    assert rows[("domain", "yesno")]["source"] == "entry point good_plugin:plugin of apollo-good 0.1.0"
    assert rows[("grader", "always")]["plugin"] == "good"
    assert listing["run"]["domain"] == "math"
