"""Prompt rendering: the right actions offered, slots filled, history numbered."""

from __future__ import annotations

import re

import pytest

from events.model import ChatMessage
from handlers.episode.prompts import (
    TOOL_USAGE,
    HistoryStep,
    PreviousSolution,
    format_history,
    format_previous_solutions,
    render_aggregation_prompt,
    render_plain_prompt,
    render_policy_prompt,
    render_summarizer_prompt,
    render_verifier_prompt,
)

SLOT = re.compile(r"\{[a-z_]*\}")
"""An unfilled ``str.format`` slot such as ``{question}`` or ``{}``."""

STEPS = [
    HistoryStep(action=f"<python_code>print({n})</python_code>", observation=f"out {n}")
    for n in range(1, 7)
]


def _user(messages: list[ChatMessage]) -> str:
    assert messages[-1].role == "user"
    return messages[-1].content


def _offered(text: str) -> list[str]:
    """Tags listed as numbered options, or the single final action."""
    numbered = re.findall(r"^\d+\. <(\w+)>\.\.\.</\1>", text, flags=re.MULTILINE)
    if numbered:
        return numbered
    return re.findall(r"end your reply with <(\w+)>\.\.\.</\1>", text)


POLICY_TOOLSETS = [
    ((), ["answer"]),
    (("python_code",), ["python_code", "answer"]),
    (("python_code", "local_rag"), ["python_code", "local_rag", "answer"]),
    (("local_rag",), ["local_rag", "answer"]),
]


@pytest.mark.parametrize(("tools", "offered"), POLICY_TOOLSETS)
@pytest.mark.parametrize("with_history", [False, True])
@pytest.mark.parametrize("previous", [None, "Attempt 1:\nx\nVerifier assessment:\n\\boxed{0}"])
def test_policy_variants_offer_exactly_the_enabled_actions(
    tools: tuple[str, ...], offered: list[str], with_history: bool, previous: str | None
) -> None:
    """Each tool/history/previous-solution combination lists its actions and fills its slots."""
    history = STEPS[:2] if with_history else []
    text = _user(
        render_policy_prompt(
            "Find x if 2x = {4}.", tools=tools, history=history, previous_solutions=previous
        )
    )
    assert _offered(text) == offered
    assert "Find x if 2x = {4}." in text
    assert SLOT.search(text.replace("{4}", "")) is None
    assert ("[Action 2]" in text) == with_history
    assert ("Earlier attempts" in text) == (previous is not None)
    for tool in ("python_code", "local_rag"):
        assert (TOOL_USAGE[tool] in text) == (tool in tools)


def test_no_tools_never_offers_python() -> None:
    """With every tool disabled only the answer is offered (the reference offered python)."""
    text = _user(render_policy_prompt("Q", tools=[], history=STEPS[:3], force_answer=False))
    assert "<python_code>...</python_code>" not in text
    assert TOOL_USAGE["python_code"] not in text
    assert _offered(text) == ["answer"]


def test_force_answer_offers_only_the_answer() -> None:
    """On the last step tools are withdrawn and the prompt says so."""
    text = _user(
        render_policy_prompt(
            "Q", tools=["python_code", "local_rag"], history=STEPS[:3], force_answer=True
        )
    )
    assert _offered(text) == ["answer"]
    assert "last turn" in text
    assert "<python_code>" in text  # only inside the shown history
    assert TOOL_USAGE["python_code"] not in text


def test_answer_format_asks_for_boxed_latex() -> None:
    """The answer action demands a boxed LaTeX answer inside answer tags."""
    text = _user(render_policy_prompt("Q", tools=[]))
    assert "<answer>\\boxed{42}</answer>" in text
    assert "<think>" in text


def test_system_prompt_is_optional() -> None:
    """A system prompt becomes the first message; without one there is a single user message."""
    with_system = render_policy_prompt("Q", tools=[], system_prompt="Be brief.")
    assert [m.role for m in with_system] == ["system", "user"]
    assert with_system[0].content == "Be brief."
    assert [m.role for m in render_policy_prompt("Q", tools=[])] == ["user"]


def test_history_shows_last_steps_with_absolute_numbers() -> None:
    """Only the last ``history_length`` steps appear, numbered from the episode's start."""
    text = format_history(STEPS, 4)
    assert re.findall(r"\[Action (\d+)\]", text) == ["3", "4", "5", "6"]
    assert re.findall(r"\[Observation (\d+)\]", text) == ["3", "4", "5", "6"]
    assert "print(3)" in text and "print(2)" not in text
    assert "[Action 6]\n<python_code>print(6)</python_code>\n[Observation 6]\nout 6" in text


def test_history_length_zero_hides_steps_but_keeps_the_count() -> None:
    """With history disabled the step count is still stated."""
    assert format_history(STEPS, 0) == ""
    text = _user(render_policy_prompt("Q", tools=[], history=STEPS, history_length=0))
    assert "already taken 6 step(s)" in text
    assert "[Action" not in text


def test_empty_actions_and_observations_are_labelled() -> None:
    """Blank steps render as readable placeholders, not empty lines."""
    text = format_history([HistoryStep(action="  ", observation="")], 1)
    assert "(empty reply)" in text and "(nothing came back)" in text


def test_step_count_can_differ_from_history() -> None:
    """An explicit step count is what the prompt states."""
    text = _user(render_policy_prompt("Q", tools=[], history=STEPS[:1], step_count=5))
    assert "already taken 5 step(s)" in text


def test_blank_previous_solutions_are_left_out() -> None:
    """Round 0 (no previous solutions) has no previous-solutions section."""
    assert "Earlier attempts" not in _user(
        render_policy_prompt("Q", tools=[], previous_solutions="  ", force_answer=True)
    )


def test_previous_solutions_are_readable_text() -> None:
    """Earlier attempts are numbered prose, never a Python list repr."""
    text = format_previous_solutions(
        [
            PreviousSolution(solution="a", feedback="ok \\boxed{1}", vote=1.0),
            PreviousSolution(solution="b", feedback="no \\boxed{0}"),
        ]
    )
    assert text.startswith("Attempt 1:\na\nVerifier assessment of attempt 1:\nok \\boxed{1}")
    assert "Attempt 2:\nb" in text
    assert "['" not in text and "1.00" in text


@pytest.mark.parametrize(
    ("tools", "offered"), [((), ["report"]), (("python_code",), ["python_code", "report"])]
)
@pytest.mark.parametrize("with_history", [False, True])
def test_verifier_variants_offer_tools_and_report(
    tools: tuple[str, ...], offered: list[str], with_history: bool
) -> None:
    """The verifier sees question and solution and must end with a boxed 1/0 report."""
    history = STEPS[:1] if with_history else []
    text = _user(render_verifier_prompt("Q?", "My solution", tools=tools, history=history))
    assert _offered(text) == offered
    assert "Q?" in text and "My solution" in text
    assert "\\boxed{1}" in text and "\\boxed{0}" in text
    assert ("[Action 1]" in text) == with_history
    assert SLOT.search(text) is None


def test_force_report_offers_only_the_report() -> None:
    """The verifier's last step may only report."""
    text = _user(
        render_verifier_prompt(
            "Q", "S", tools=["python_code"], history=STEPS[:2], force_report=True
        )
    )
    assert _offered(text) == ["report"]


def test_aggregation_prompt_carries_verdict_and_reports() -> None:
    """The aggregator gets the majority verdict, every report, and the output format."""
    text = _user(
        render_aggregation_prompt("Q", "S", majority_judgment=0, reports=["first", "second"])
    )
    assert "\\boxed{0}" in text and "incorrect" in text
    assert "Report 1:\nfirst" in text and "Report 2:\nsecond" in text
    assert "<report>" in text
    assert SLOT.search(text) is None


def test_summarizer_prompt_has_the_brief_structure() -> None:
    """The summarizer is asked for Strategy, four checkpoints and a Final Claim."""
    text = _user(render_summarizer_prompt("<think>x</think><answer>3</answer>"))
    for part in (
        "**Strategy:**",
        "**Logical Checkpoints:**",
        "1. Setup",
        "2. Intermediate Result",
        "3. Pivotal Step",
        "4. Resolution",
        "**Final Claim:** <answer>",
    ):
        assert part in text
    assert text.endswith("<think>x</think><answer>3</answer>")


def test_plain_prompt_has_no_action_tags() -> None:
    """The single-turn prompt asks for a boxed answer without tags."""
    text = _user(render_plain_prompt("What is 1+1?"))
    assert "\\boxed{...}" in text and "<answer>" not in text and "What is 1+1?" in text


def test_unknown_tool_is_rejected() -> None:
    """Offering a tool without a usage paragraph raises ValueError."""
    with pytest.raises(ValueError, match="web_search"):
        render_policy_prompt("Q", tools=["web_search"])


def test_custom_tool_registry_adds_tools() -> None:
    """A caller-supplied registry offers new tools."""
    text = _user(render_policy_prompt("Q", tools=["lean4"], tool_usage={"lean4": "Check a proof."}))
    assert _offered(text) == ["lean4", "answer"]


@pytest.mark.parametrize(
    "garbage", ["", "{}", "{question}", "\x00\u200b", "}" * 1000, "x" * 100_000]
)
def test_garbage_inputs_render_verbatim(garbage: str) -> None:
    """Odd questions and solutions are inserted as-is and never interpreted."""
    policy = _user(render_policy_prompt(garbage, tools=["python_code"]))
    verifier = _user(render_verifier_prompt(garbage, garbage, tools=[]))
    assert garbage.strip() in policy and garbage.strip() in verifier


def test_rendering_is_deterministic() -> None:
    """The same inputs give identical messages."""
    kwargs = {"tools": ["python_code"], "history": STEPS, "previous_solutions": "p"}
    assert render_policy_prompt("Q", **kwargs) == render_policy_prompt("Q", **kwargs)
