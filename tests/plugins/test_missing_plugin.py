"""A run recorded with a plugin replays only where that plugin is installed; elsewhere it says which."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from engine.app.operations import submission
from engine.cli.main import main
from engine.grading.router import RegistryGrader
from engine.plugins import forget, load_plugins
from engine.testing.harness import ExactGrader, make_settings, new_memory_log, run_until_done, services
from events import RunStarted
from events.codec import to_builtins
from handlers.catalog import ExtensionMissing
from replay.verify import verify_run
from tests.episode.test_episode_flow import Replies
from tests.plugins.support import on_path, write_package

SOURCE = '''
    from engine.plugins import Domain, Grade, Plugin, grader

    def yes_or_no(reply, answer):
        word = (answer or "").strip().lower()
        return word if word in ("yes", "no") else None

    @grader("yes_no")
    def same_word(answer, ground_truth, metadata):
        return Grade(score=float(answer == ground_truth.lower()), method="yes_no")

    plugin = Plugin(name="yesno", graders=[same_word], domains=[Domain(
        name="yes_no", extract=yes_or_no, grader="yes_no", answer_usage="yes or no")])
'''


async def _recorded_with_the_plugin(tmp_path: Path) -> list:
    site = write_package(tmp_path / "site", "apollo-yesno", {"apollo_yesno.py": SOURCE},
                         {"yesno": "apollo_yesno:plugin"})
    with on_path(site):
        settings = make_settings({"episode": {"domain": "yes_no"}})
        catalog = load_plugins(settings).catalog()
        log = new_memory_log()
        svc = services(settings, models=Replies(["<answer>yes</answer>"]),
                       grader=RegistryGrader(ExactGrader(), catalog=catalog))
        await log.append(submission("r-yes", "Is 7 prime?", ground_truth="yes"))
        await run_until_done(log, svc, ["r-yes"])
        records = await log.read_run("r-yes")
        assert (await verify_run(records, catalog=catalog)).ok
    forget()
    return records


async def test_the_run_records_which_plugin_brought_its_domain_and_grader(tmp_path: Path) -> None:
    """RunStarted names the plugin (and its distribution) of each plugin entry the run chose."""
    records = await _recorded_with_the_plugin(tmp_path)
    [started] = [r.event for r in records if isinstance(r.event, RunStarted)]
    extensions = started.settings["extensions"]
    assert set(extensions) == {"domain", "grader"}
    assert "plugin 'yesno'" in extensions["domain"]["yes_no"] and "apollo-yesno" in extensions["domain"]["yes_no"]
    assert "extensions" not in make_settings().run_settings()  # built-ins alone record what they always did


async def test_verifying_where_the_plugin_is_not_installed_names_it(tmp_path: Path) -> None:
    """Without the plugin, verification refuses the run and names the domain and its plugin."""
    records = await _recorded_with_the_plugin(tmp_path)
    here = load_plugins(make_settings()).catalog()
    assert "yes_no" not in here.domains
    with pytest.raises(ExtensionMissing) as caught:
        await verify_run(records, catalog=here)
    message = str(caught.value)
    assert message.startswith("run r-yes was recorded with domain 'yes_no' from plugin 'yesno'")
    assert "apollo-yesno" in message and "which is not installed here" in message


def test_apollo_replay_verify_without_the_plugin_exits_one_naming_it(tmp_path: Path, capsys) -> None:
    """`apollo replay --verify --file` prints the missing plugin and exits 1 instead of deciding differently."""
    records = asyncio.run(_recorded_with_the_plugin(tmp_path))
    history = tmp_path / "run.ndjson"
    history.write_text("".join(json.dumps({"seq": r.seq, "subject": r.subject, "event": to_builtins(r.event)}) + "\n"
                               for r in records))
    assert main(["replay", "--file", str(history), "--verify"]) == 1
    err = capsys.readouterr().err
    assert "r-yes: run r-yes was recorded with domain 'yes_no' from plugin 'yesno'" in err
