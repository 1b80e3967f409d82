"""Golden episodes per protocol (``episode.protocol``) through the real routing table.

Each case is a recorded list of model replies (our own writing, shaped like what
instruct models send: think blocks, tag-less chains of thought, repeated or mixed
tags, blank replies) run through the real deciders and effectors with the in-memory
log; grading uses the real grading functions in-process. The expected step count,
done reason and score come from the spec sections named in each case
(``../shared/spec/reference-behaviour.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from engine.app.operations import submission
from engine.config.settings import load_settings
from engine.errors import ConfigError
from engine.testing.harness import EchoPython, make_settings, new_memory_log, run_until_done, services
from events import ActionParsed, AnswerGraded, EpisodeEnded, ModelCallRequested
from handlers.episode.protocol import FALLBACK_ANSWER, PROTOCOLS
from handlers.grading.dispatch import grade_answer
from handlers.grading.registry import get_grader
from replay.verify import verify_run
from tests.episode.test_episode_flow import Replies

QUESTION = "What is 6 times 7?"
TRUTH = "42"

TOOL = "<think>Let me check 6*7 with Python.</think>\n<python_code>print(6*7)</python_code>"
ANSWER = "<think>The program printed 42.</think>\n<answer>\\boxed{42}</answer>"
TAGLESS_RIGHT = "Six sevens: 6 * 7 = 42.\nSo the product is \\boxed{42}."
TAGLESS_WRONG = "Six sevens are forty-one.\nThe answer is 41"
BARE_ANSWER = "<answer>42</answer>"
TOOL_AND_ANSWER = "<python_code>print(6*7)</python_code>\nIt must be <answer>\\boxed{42}</answer>"
TWO_ANSWERS = "<answer>\\boxed{41}</answer> no, wait: <answer>\\boxed{42}</answer>"
TWO_TOOLS = "<python_code>print(6)</python_code> and <python_code>print(7)</python_code>"
THINK_BOX_THEN_TOOL = "<think>Surely it is \\boxed{42}; let me run it.</think>\n<python_code>print(6*7)</python_code>"
REPORT = "<report>I checked it: 6 * 7 = 42. \\boxed{42}</report>"


class InProcessGrader:
    """The real grading functions, called in-process (the pool is tested on its own)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    async def grade(self, answer: str, ground_truth: str, mode: str, *, metadata: Any = None) -> Any:
        self.calls.append((answer, mode))
        return grade_answer(answer, ground_truth, mode)


@dataclass
class Episode:
    events: list[Any]
    records: list[Any]
    model: Replies
    python: EchoPython
    grader: InProcessGrader

    def of(self, event_type: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, event_type)]

    @property
    def ended(self) -> EpisodeEnded:
        [ended] = self.of(EpisodeEnded)
        return ended

    @property
    def graded(self) -> AnswerGraded:
        [graded] = self.of(AnswerGraded)
        return graded

    @property
    def purposes(self) -> list[str]:
        return [r.purpose for r in self.of(ModelCallRequested)]


async def run_protocol(replies: list[str], protocol: str, *, all_used: bool = True, **episode: Any) -> Episode:
    log = new_memory_log()
    model = Replies(replies)
    python = EchoPython()
    grader = InProcessGrader()
    settings = make_settings({"episode": {"protocol": protocol, **episode}})
    svc = services(settings, models=model, tools={"python_code": python}, grader=grader)
    await log.append(submission("r-proto", QUESTION, ground_truth=TRUTH))
    await run_until_done(log, svc, ["r-proto"])
    records = await log.read_run("r-proto")
    if all_used:
        assert model.replies == [], "every recorded reply was asked for"
    return Episode([r.event for r in records], records, model, python, grader)


@dataclass(frozen=True)
class Golden:
    name: str
    replies: list[str]
    steps: int
    done_reason: str
    score: float
    python_calls: list[str] = field(default_factory=list)
    max_steps: int = 4
    source: str = ""


REFERENCE_TEST_CASES = [
    Golden("tag-less boxed reply ends and is graded", [TAGLESS_RIGHT], 1, "answer", 1.0,
           source="§1.3 step 3: any reply without a tool tag ends the episode"),
    Golden("tag-less 'The answer is' reply", [TAGLESS_WRONG], 1, "answer", 0.0,
           source="§1.6 A: the loose 'The answer is' pattern reads 41"),
    Golden("bare <answer> falls to the last line", [BARE_ANSWER], 1, "answer", 0.0,
           source="§1.6 table: <answer>42</answer> scores 0 under grader A"),
    Golden("answer after a tool call", [TOOL, ANSWER], 2, "answer", 1.0, ["print(6*7)"],
           source="§1.3 steps 2-6"),
    Golden("invalid tool+answer reply runs the tool, no error turn", [TOOL_AND_ANSWER, ANSWER], 2, "answer", 1.0,
           ["print(6*7)"], source="§2: the env acts on the raw text; §1.3 step 2"),
    Golden("repeated tool tag runs only its first block", [TWO_TOOLS, ANSWER], 2, "answer", 1.0, ["print(6)"],
           source="§1.3 step 2: a repeated tag only runs its first block"),
    Golden("two answers on one line: the greedy box quirk", [TWO_ANSWERS], 1, "answer", 0.0,
           source="§1.6 A: greedy single-line \\boxed{} reads '41}</answer> ... \\boxed{42'"),
    Golden("last-step tool call is not run and scores 0", [TOOL, TOOL], 2, "max_steps", 0.0, ["print(6*7)"],
           max_steps=2, source="§1.3 step 5; §10.2 trajectory C"),
    Golden("last-step tool call after a boxed guess in think scores 1", [TOOL, THINK_BOX_THEN_TOOL], 2,
           "max_steps", 1.0, ["print(6*7)"], max_steps=2,
           source="§13: a boxed value inside <think> can become the graded answer"),
    Golden("empty reply ends the episode", [""], 1, "empty_action", 0.0, source="§1.3 step 3"),
    Golden("max_steps 1: a tool call is graded, never run", [TOOL], 1, "max_steps", 0.0, max_steps=1,
           source="§10.6: max_steps 1, one reply graded"),
    Golden("max_steps 1: tag-less reply", [TAGLESS_RIGHT], 1, "answer", 1.0, max_steps=1, source="§10.6"),
]

REFERENCE_EVOLVE_CASES = [
    Golden("bare <answer> is read by grader B", [BARE_ANSWER], 1, "answer", 1.0,
           source="§1.6 table: <answer>42</answer> scores 1 under grader B"),
    Golden("answer after a tool call", [TOOL, ANSWER], 2, "answer", 1.0, ["print(6*7)"], source="§1.4, §6.5"),
    Golden("invalid tool+answer reply ends with its answer, tool not run", [TOOL_AND_ANSWER], 1, "answer", 1.0,
           source="§2: the projection keeps the answer; §1.4 _is_done"),
    Golden("repeated answer tags: first answer, invalid, greedy box", [TWO_ANSWERS], 1, "answer", 0.0,
           source="§2 validity; §1.6 B"),
    Golden("repeated tool tag runs the projected first block", [TWO_TOOLS, ANSWER], 2, "answer", 1.0, ["print(6)"],
           source="§2: first complete tool block"),
    Golden("a policy report ends with done reason report (retry asked, not graded)", [REPORT, ANSWER], 1,
           "report", 1.0, source="§4.3 step 1: a <report> projection forces done; §6.2 post-loop retry"),
    Golden("tag-less reply: empty_action, still scored by the env (retry not graded)",
           [TAGLESS_RIGHT, "<answer>\\boxed{7}</answer>"], 1, "empty_action", 1.0,
           source="§4.3: empty projection forces done; §1.4 reward on done; §6.2 retry never stepped"),
    Golden("empty reply: empty_action after five retries", [""] * 6, 1, "empty_action", 0.0,
           source="§4.3; §6.2 post-loop retry, 5 tries"),
    Golden("last-step tool call: force-answer asks until answer tags", [TOOL, TOOL, "Still checking.", ANSWER], 2,
           "max_steps", 1.0, ["print(6*7)"], max_steps=2,
           source="§6.2 step 2 force-answer; §1.4 max_steps checked first"),
    Golden("five failed force-answer asks: the fallback answer is stepped", [TAGLESS_RIGHT] * 6, 1, "max_steps", 0.0,
           max_steps=1, source="§6.2 step 2: fallback <answer>Failed to generate answer...</answer>"),
    Golden("max_steps 1: an answer ends with max_steps", [ANSWER], 1, "max_steps", 1.0, max_steps=1,
           source="§1.4: max_steps is checked before answer"),
]

APOLLO_CASES = [
    Golden("max_steps 1: a tag-less reply is the answer", [TAGLESS_RIGHT], 1, "answer", 1.0, max_steps=1,
           source="issue 21 §2: single-turn prompt, no tools"),
    Golden("max_steps 1: a tool call is not run and holds no answer", [TOOL], 1, "answer", 0.0, max_steps=1,
           source="issue 21 §2"),
    Golden("tool+answer is an invalid turn with an error, then an answer", [TOOL_AND_ANSWER, ANSWER], 2, "answer",
           1.0, source="apollo's own protocol (unchanged default)"),
    Golden("tag-less reply gets another turn", [TAGLESS_RIGHT, ANSWER], 2, "answer", 1.0,
           source="apollo's own protocol (unchanged default)"),
]


def _cases(protocol: str, cases: list[Golden]) -> list[Any]:
    return [pytest.param(protocol, case, id=f"{protocol}: {case.name}") for case in cases]


@pytest.mark.parametrize(
    ("protocol", "case"),
    _cases("reference_test", REFERENCE_TEST_CASES)
    + _cases("reference_evolve", REFERENCE_EVOLVE_CASES)
    + _cases("apollo", APOLLO_CASES),
)
async def test_golden_episode_ends_with_the_prescribed_steps_reason_and_score(protocol: str, case: Golden) -> None:
    """Each recorded reply list ends with the step count, done reason and score the spec prescribes."""
    episode = await run_protocol(case.replies, protocol, max_steps=case.max_steps)
    assert (episode.ended.steps, episode.ended.done_reason, episode.graded.score) == (
        case.steps, case.done_reason, case.score,
    ), case.source
    assert episode.python.calls == case.python_calls, case.source


async def test_reference_test_grades_every_raw_reply_once_more_per_tool_run() -> None:
    """Grader A reads the raw replies concatenated, a tool step's reply twice (spec §1.3 step 4)."""
    episode = await run_protocol([TOOL, ANSWER], "reference_test")
    assert episode.grader.calls == [(TOOL + TOOL + ANSWER, "reference")]
    assert episode.graded.method == "reference" and episode.graded.answer == "42"


async def test_reference_test_records_validity_without_an_error_turn() -> None:
    """An invalid reply is recorded invalid, its tool still runs and no error reaches the prompt."""
    episode = await run_protocol([TOOL_AND_ANSWER, ANSWER], "reference_test")
    first = episode.of(ActionParsed)[0]
    assert (first.kind, first.valid, first.tool) == ("answer", False, "python_code")
    assert first.error not in episode.model.prompts[1][-1].content
    assert "<tool_response>" in episode.model.prompts[1][-1].content
    assert episode.ended.invalid_turns == 1


async def test_reference_test_never_forces_an_answer_on_the_last_step() -> None:
    """The reference's test runner asks with the same prompt on every step (spec §10.2)."""
    episode = await run_protocol([TOOL, TOOL, TOOL], "reference_test", max_steps=3)
    assert episode.purposes == ["act", "act", "act"]
    assert "python_code" in episode.model.prompts[-1][-1].content


async def test_reference_evolve_reask_prompt_offers_only_the_answer() -> None:
    """A force-answer ask is answer-only and shows the earlier steps, not the reply it replaces."""
    episode = await run_protocol([TOOL, "Still checking.", ANSWER], "reference_evolve", max_steps=2)
    assert episode.purposes == ["act", "act", "answer_reask"]
    reask = episode.model.prompts[2][-1].content
    assert "last turn" in reask and "1. <python_code>" not in reask
    assert "Still checking." not in reask


async def test_reference_evolve_fallback_answer_is_what_gets_graded() -> None:
    """After five failed asks the reference's fallback answer is stepped and graded (spec §6.2)."""
    episode = await run_protocol([TAGLESS_RIGHT] * 6, "reference_evolve", max_steps=1)
    assert episode.purposes == ["act"] + ["answer_reask"] * 5
    assert episode.of(ActionParsed)[-1].action == FALLBACK_ANSWER
    assert episode.grader.calls == [(FALLBACK_ANSWER, "reference_evolve")]


async def test_reference_evolve_retry_is_recorded_but_never_a_step() -> None:
    """The after-loop retry is a recorded call pair; the trajectory keeps one step."""
    episode = await run_protocol([TAGLESS_RIGHT, "no tags", ANSWER], "reference_evolve")
    assert episode.purposes == ["act", "answer_retry", "answer_retry"]
    assert episode.ended.steps == 1
    assert episode.grader.calls == [(TAGLESS_RIGHT, "reference_evolve")]


async def test_reference_evolve_force_answer_false_asks_nothing_more() -> None:
    """With episode.force_answer false the evolving protocol neither re-asks nor retries."""
    episode = await run_protocol([TOOL, TOOL], "reference_evolve", max_steps=2, force_answer=False)
    assert episode.purposes == ["act", "act"]
    assert episode.ended.done_reason == "max_steps"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_max_steps_one_renders_the_single_turn_prompt_without_tools(protocol: str) -> None:
    """With max_steps 1 no protocol offers a tool in its prompt."""
    episode = await run_protocol([ANSWER], protocol, max_steps=1)
    [prompt] = episode.model.prompts
    assert "python_code" not in prompt[-1].content and QUESTION in prompt[-1].content


@pytest.mark.parametrize(("protocol", "grader"), [("apollo", None), ("reference_test", "reference"),
                                                  ("reference_evolve", "reference_evolve")])
async def test_the_run_records_the_grader_its_protocol_implies(protocol: str, grader: str | None) -> None:
    """RunStarted records the protocol and the grader it implies (apollo: the domain's)."""
    from events import RunStarted

    episode = await run_protocol([ANSWER], protocol)
    [started] = episode.of(RunStarted)
    recorded = started.settings["episode"]
    assert recorded["protocol"] == protocol
    assert recorded["grading"] == (grader or "math")


async def test_an_explicit_grader_wins_and_grades_the_final_answer() -> None:
    """episode.grading beats the protocol's grader; a final-answer grader gets the last reply's answer."""
    episode = await run_protocol([TAGLESS_RIGHT], "reference_test", grading="exact")
    assert episode.grader.calls == [("42", "exact")]
    assert (episode.graded.method, episode.graded.score, episode.ended.done_reason) == ("exact", 1.0, "answer")


@pytest.mark.parametrize("protocol", ["reference_test", "reference_evolve"])
async def test_replay_verification_passes_for_a_reference_protocol_run(protocol: str) -> None:
    """Re-running the deciders over a recorded reference-protocol run reproduces it exactly."""
    replies = [TOOL, TWO_TOOLS, "Still checking.", ANSWER]
    episode = await run_protocol(replies, protocol, max_steps=3, all_used=False)
    result = await verify_run(episode.records)
    assert result.ok, result.first_difference and result.first_difference.describe()
    assert result.checked > 0


async def test_replay_verification_passes_with_retries() -> None:
    """A run with after-loop retries verifies too (every call is a recorded request/reply pair)."""
    episode = await run_protocol(["", "no", ANSWER], "reference_evolve")
    assert (await verify_run(episode.records)).ok


@pytest.mark.parametrize("protocol", ["reference_test", "reference_evolve"])
@pytest.mark.parametrize("garbage", ["\x00\x01", "<answer>", "</answer><answer>", "<python_code>x",
                                     "<report>", "}{" * 200, "\\boxed{" * 300, "🙂" * 400])
async def test_garbage_replies_end_a_reference_episode_cleanly(protocol: str, garbage: str) -> None:
    """Garbage and unclosed tags end the episode with exactly one grade, never a crash."""
    episode = await run_protocol([garbage] * 12, protocol, all_used=False)
    assert len(episode.of(AnswerGraded)) == 1
    assert episode.graded.score == 0.0


@pytest.mark.parametrize("value", ["fast", "", 3, None, ["apollo"], "Reference_Test"])
def test_an_unknown_protocol_is_refused_naming_the_key_and_the_choices(tmp_path: Any, value: Any) -> None:
    """A bad episode.protocol is a ConfigError naming the key and the allowed values."""
    import yaml

    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"episode": {"protocol": value}}))
    with pytest.raises(ConfigError) as caught:
        load_settings(path, environ={})
    message = str(caught.value)
    assert "episode.protocol" in message
    if isinstance(value, str):  # a wrong type is named as such by msgspec
        assert "allowed: apollo, reference_test, reference_evolve" in message


def test_the_cli_reports_a_bad_protocol_in_one_line(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """apollo solve with a bad protocol prints one error line and exits 1 (no traceback)."""
    from engine.cli.main import main

    path = tmp_path / "bad.yaml"
    path.write_text("episode:\n  protocol: fastest\n")
    assert main(["solve", "--config", str(path), "What is 1+1?"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "episode.protocol" in err and "apollo" in err


def test_reference_evolve_is_a_registered_pooled_grader() -> None:
    """Grader B is available by name and runs in the grading pool."""
    assert get_grader("reference_evolve").pooled


async def test_the_evolve_workflow_runs_its_policy_episodes_under_reference_evolve() -> None:
    """Evolve rounds follow the protocol too: a tag-less reply ends with empty_action, is retried, and replays."""
    from tests.evolve.support import RoleModel, standard_reply

    answers = standard_reply()

    def reply(role: str, prompt: str, number: int) -> str:
        if role == "policy" and number == 0:
            return TAGLESS_RIGHT
        return answers(role, prompt, number)

    model = RoleModel(reply)
    log = new_memory_log()
    settings = make_settings({"episode": {"protocol": "reference_evolve"}, "evolve": {"rounds": 2, "verifiers": 1}})
    svc = services(settings, models=model, grader=InProcessGrader())
    await log.append(submission("r-evo-proto", QUESTION, ground_truth=TRUTH, workflow="evolve"))
    await run_until_done(log, svc, ["r-evo-proto"])
    records = list(await log.read_run("r-evo-proto"))
    events = [r.event for r in records]
    graded = [e for e in events if isinstance(e, AnswerGraded) and e.role == "policy"]
    assert [(g.done_reason, g.score, g.method) for g in graded] == [
        ("empty_action", 1.0, "reference_evolve"), ("answer", 1.0, "reference_evolve")]
    purposes = [e.purpose for e in events if isinstance(e, ModelCallRequested) and e.role == "policy"]
    assert purposes == ["act", "answer_retry", "act"]
    assert (await verify_run(records)).ok


async def test_single_turn_evolve_rounds_still_show_earlier_attempts() -> None:
    """With max_steps 1 a later round's prompt offers no tool but keeps the earlier attempts."""
    from tests.evolve.support import RoleModel, run_evolve, standard_reply

    model = RoleModel(standard_reply())
    await run_evolve(model, episode={"max_steps": 1}, evolve={"rounds": 2, "verifiers": 1})
    policy_prompts = [call.prompt for call in model.calls if call.role == "policy"]
    assert len(policy_prompts) == 2
    assert "Earlier attempts" not in policy_prompts[0] and "Earlier attempts" in policy_prompts[1]
    assert all("python_code" not in prompt for prompt in policy_prompts)
