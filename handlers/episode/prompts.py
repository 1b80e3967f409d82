"""Prompts for every model role of an episode, rendered as chat messages.

By default every turn is a fresh prompt: an optional system message plus one user
message that holds the problem, optional earlier attempts with their verdicts, the
recent steps of this episode, and the actions allowed now. With ``episode.prompt_layout:
chat`` the policy's prompt is a growing chat instead (:func:`render_policy_chat`). Renderers are pure functions of their
arguments; user text is inserted verbatim (never through ``str.format``), so braces
in a question or in code come through untouched.

Tools are described by :data:`TOOL_USAGE` (tag -> usage paragraph); a new tool only
needs an entry there (or a registry passed to the renderer).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Final

import msgspec

from events.model import ChatMessage


class HistoryStep(msgspec.Struct, frozen=True, kw_only=True):
    """One past step of an episode as the model is shown it."""

    action: str
    """The (projected or sanitised) action the model took."""
    observation: str = ""
    """What came back (a ``<tool_response>`` or an error note); empty if nothing."""


class PreviousSolution(msgspec.Struct, frozen=True, kw_only=True):
    """An earlier attempt at the problem and the verifiers' assessment of it."""

    solution: str
    feedback: str
    vote: float | None = None
    """Share of verifiers that judged the attempt correct, when known."""


TOOL_USAGE: Final[Mapping[str, str]] = MappingProxyType(
    {
        "python_code": (
            "Run Python 3. Put one complete program in the block (no Markdown fences) "
            "and print every value you want to see: only standard output comes back, "
            "inside <tool_response> </tool_response>, at your next turn. If the program "
            "fails, read the error and repair it in your next step. Libraries such as "
            "sympy, numpy and scipy can be imported."
        ),
        "local_rag": (
            "Look up how to use a function in the documentation of sympy, scipy, "
            "numpy, math, cmath, fractions or itertools. The block holds one JSON "
            "object naming the library and your question, for example "
            '<local_rag>{"repo_name": "sympy", "query": "solve a system of polynomial '
            'equations"}</local_rag>. The matching documentation comes back inside '
            "<tool_response> </tool_response>."
        ),
    }
)
"""Usage paragraph for each tool tag the prompts can offer."""

_ANSWER_USAGE: Final = (
    "Your final answer in LaTeX, inside \\boxed{...}, for example "
    "<answer>\\boxed{42}</answer>. Put only the answer in this block: no code and no "
    "reasoning."
)
_REPORT_USAGE: Final = (
    "Your verdict. Say whether the proposed solution is correct or incorrect and give "
    "the decisive reasons briefly. The report must end with \\boxed{1} if the solution "
    "is correct or \\boxed{0} if it is not, inside the report tags, for example "
    "<report>Step 3 drops a factor of 2, so the final value is wrong. \\boxed{0}</report>."
)
_THINK_FIRST: Final = "Reason inside <think> </think> first."


def format_history(steps: Sequence[HistoryStep], history_length: int) -> str:
    """The last ``history_length`` steps, numbered from the start of the episode.

    Each step reads ``[Action k]`` followed by the action, then ``[Observation k]``
    followed by what came back; steps are separated by a blank line.
    """
    if history_length <= 0 or not steps:
        return ""
    first = max(len(steps) - history_length, 0)
    blocks = []
    for number, step in enumerate(steps[first:], start=first + 1):
        action = step.action.strip() or "(empty reply)"
        observation = step.observation.strip() or "(nothing came back)"
        blocks.append(f"[Action {number}]\n{action}\n[Observation {number}]\n{observation}")
    return "\n\n".join(blocks)


def format_previous_solutions(solutions: Sequence[PreviousSolution]) -> str:
    """Earlier attempts as numbered, readable text (never a Python list repr)."""
    blocks = []
    for number, entry in enumerate(solutions, start=1):
        block = (
            f"Attempt {number}:\n{entry.solution.strip()}\n"
            f"Verifier assessment of attempt {number}:\n{entry.feedback.strip()}"
        )
        if entry.vote is not None:
            block += f"\nShare of verifiers judging it correct: {entry.vote:.2f}"
        blocks.append(block)
    return "\n\n".join(blocks)


def render_policy_prompt(
    question: str,
    *,
    tools: Sequence[str],
    history: Sequence[HistoryStep] = (),
    history_length: int = 4,
    step_count: int | None = None,
    previous_solutions: str | None = None,
    force_answer: bool = False,
    system_prompt: str | None = None,
    tool_usage: Mapping[str, str] = TOOL_USAGE,
    intro: str | None = None,
    answer_usage: str | None = None,
) -> list[ChatMessage]:
    """The solver's prompt for its next step.

    Args:
        question: The problem statement.
        tools: Tool tags offered this turn (empty: answer only).
        history: Every step taken so far; the last ``history_length`` are shown.
        history_length: How many past steps to show (0 shows none).
        step_count: Steps taken so far; defaults to ``len(history)``.
        previous_solutions: Earlier attempts and verdicts as text (evolve workflow);
            ``None`` or blank leaves the section out.
        force_answer: Last step: only the final answer is offered.
        system_prompt: Optional system message.
        tool_usage: Usage paragraph per tool tag; tags missing here fall back to
            :data:`TOOL_USAGE`.
        intro: The task domain's opening line (default: the math solver's).
        answer_usage: How to write the ``<answer>`` in this domain (default: boxed LaTeX).

    Raises:
        ValueError: a tool has no usage paragraph.
    """
    offered = () if force_answer else tuple(tools)
    usage = {**TOOL_USAGE, **tool_usage}
    options = [*_tool_options(offered, usage), ("answer", answer_usage or _ANSWER_USAGE)]
    intro = (intro or "You are a careful mathematical problem solver.") + (
        " You work over several turns and can use the tools below to compute and check your work."
        if offered
        else ""
    )
    sections = [
        intro,
        f"Problem:\n{question.strip()}",
        _previous_solutions_section(previous_solutions),
        _history_section(history, history_length, step_count),
        _final_turn_note(force_answer, "answer"),
        _actions_section(options, final_action="answer"),
    ]
    return _messages(system_prompt, sections)


def render_policy_chat(
    question: str,
    *,
    tools: Sequence[str],
    history: Sequence[HistoryStep] = (),
    previous_solutions: str | None = None,
    force_answer: bool = False,
    system_prompt: str | None = None,
    tool_usage: Mapping[str, str] = TOOL_USAGE,
    intro: str | None = None,
    answer_usage: str | None = None,
) -> list[ChatMessage]:
    """The solver's prompt as a growing chat (``episode.prompt_layout: chat``).

    The first user message is the first step's prompt; each step taken adds the reply as an
    assistant message and what came back as a user message. Every prompt therefore continues
    the one before it plus the reply just given, so a token-level trainer (verl's agent loop)
    trains every turn. Every step stays in the chat (``history_length`` does not apply). On the
    last step the final note and the answer-only action follow the last observation. The
    reply is shown as the model wrote it (``HistoryStep.action`` must be the raw reply).

    Raises:
        ValueError: a tool has no usage paragraph.
    """
    opening = render_policy_prompt(
        question, tools=tools, previous_solutions=previous_solutions,
        force_answer=force_answer and not history, system_prompt=system_prompt,
        tool_usage=tool_usage, intro=intro, answer_usage=answer_usage,
    )
    messages = list(opening)
    for number, step in enumerate(history, start=1):
        messages.append(ChatMessage(role="assistant", content=step.action))
        observation = step.observation.strip() or "(nothing came back)"
        if force_answer and number == len(history):
            final = [_final_turn_note(True, "answer"),
                     _actions_section([("answer", answer_usage or _ANSWER_USAGE)], final_action="answer")]
            observation = "\n\n".join([observation, *final])
        messages.append(ChatMessage(role="user", content=observation))
    return messages


def render_verifier_prompt(
    question: str,
    policy_solution: str,
    *,
    tools: Sequence[str],
    history: Sequence[HistoryStep] = (),
    history_length: int = 4,
    step_count: int | None = None,
    force_report: bool = False,
    system_prompt: str | None = None,
    tool_usage: Mapping[str, str] = TOOL_USAGE,
) -> list[ChatMessage]:
    """The verifier's prompt: check a proposed solution, ending in a boxed 1/0 report.

    Arguments mirror :func:`render_policy_prompt`; ``force_report`` offers only the
    report (the verifier's last step).
    """
    offered = () if force_report else tuple(tools)
    options = [*_tool_options(offered, tool_usage), ("report", _REPORT_USAGE)]
    sections = [
        "You are a verifier. Your only job is to decide whether another agent's "
        "proposed solution to a math problem is correct: check its reasoning and its "
        "final answer rather than writing a new solution of your own.",
        f"Problem:\n{question.strip()}",
        f"Proposed solution:\n{policy_solution.strip()}",
        _history_section(history, history_length, step_count),
        _final_turn_note(force_report, "report"),
        _actions_section(options, final_action="report"),
    ]
    return _messages(system_prompt, sections)


def render_aggregation_prompt(
    question: str,
    policy_solution: str,
    *,
    majority_judgment: int,
    reports: Sequence[str],
    system_prompt: str | None = None,
) -> list[ChatMessage]:
    """Merge the verifier reports that share the majority verdict into one report."""
    verdict = "correct" if majority_judgment else "incorrect"
    listed = "\n\n".join(
        f"Report {number}:\n{report.strip()}" for number, report in enumerate(reports, start=1)
    )
    sections = [
        "You merge the reports of several independent verifiers into a single report.",
        f"Problem:\n{question.strip()}",
        f"Proposed solution:\n{policy_solution.strip()}",
        f"The verifiers' majority verdict is \\boxed{{{majority_judgment}}}: the solution "
        f"is {verdict}. These reports support that verdict:\n\n{listed or '(none)'}",
        "Read the reports, keep their strongest and best-supported arguments, drop "
        "repetition and weak points, and write one concise, coherent report with the same "
        f"verdict. Put it inside <report> </report> and end it with "
        f"\\boxed{{{majority_judgment}}} inside the tags.",
    ]
    return _messages(system_prompt, sections)


def render_summarizer_prompt(
    trajectory_text: str, *, system_prompt: str | None = None
) -> list[ChatMessage]:
    """Condense a solving trajectory into a Verification Brief for the verifiers."""
    sections = [
        "### Role\nYou audit mathematical reasoning. Condense the interaction log below "
        "into a Verification Brief: a short account a verifier can check quickly.",
        "### What you receive\nThe log of a solver's turns. It may contain reasoning in "
        "<think>, programs in <python_code>, their output in <tool_response>, and a final "
        "<answer>.",
        "### Rules\n"
        "- Leave out dead ends, retries and chatter; keep only the line of reasoning "
        "that leads to the final answer.\n"
        "- For every key value, say whether it was computed by code (seen in a tool "
        "response) or only claimed in the reasoning.\n"
        "- Write mathematics in LaTeX.\n"
        "- Order the checkpoints so that each one follows from the ones before it.",
        "### Output format\n"
        "**Strategy:** the overall approach in one or two sentences.\n"
        "**Logical Checkpoints:**\n"
        "1. Setup: definitions, variables and the quantity asked for.\n"
        "2. Intermediate Result: the main values or facts established along the way.\n"
        "3. Pivotal Step: the step the answer hinges on, and how it was justified.\n"
        "4. Resolution: how the final value follows.\n"
        "**Final Claim:** <answer>the final answer, as the solver stated it</answer>",
        f"### Log to condense\n{trajectory_text.strip()}",
    ]
    return _messages(system_prompt, sections)


def render_plain_prompt(question: str, *, system_prompt: str | None = None) -> list[ChatMessage]:
    """A single-turn prompt without tools or action tags (one-step episodes)."""
    sections = [
        "Solve the following problem. Reason step by step, then give the final answer "
        "in LaTeX inside \\boxed{...}.",
        question.strip(),
    ]
    return _messages(system_prompt, sections)


def _tool_options(tools: Sequence[str], tool_usage: Mapping[str, str]) -> list[tuple[str, str]]:
    missing = [tool for tool in tools if tool not in tool_usage]
    if missing:
        msg = f"no usage text for tool(s): {', '.join(missing)}"
        raise ValueError(msg)
    return [(tool, tool_usage[tool]) for tool in dict.fromkeys(tools)]


def _previous_solutions_section(previous_solutions: str | None) -> str:
    if previous_solutions is None or not previous_solutions.strip():
        return ""
    return (
        "Earlier attempts at this problem, each followed by a verifier's assessment:\n"
        f"{previous_solutions.strip()}\n\n"
        "An assessment ending in \\boxed{1} judged that attempt correct; one ending in "
        "\\boxed{0} judged it wrong. Build on what the correct attempts got right, and "
        "find and repair the mistakes of the wrong ones instead of repeating them."
    )


def _history_section(
    history: Sequence[HistoryStep], history_length: int, step_count: int | None
) -> str:
    taken = len(history) if step_count is None else step_count
    if taken <= 0:
        return ""
    header = f"You have already taken {taken} step(s) on this problem."
    shown = format_history(history, history_length)
    if not shown:
        return header
    return f"{header} The most recent ones, with what came back:\n\n{shown}"


def _final_turn_note(final: bool, action: str) -> str:
    if not final:
        return ""
    return f"This is your last turn: tools are no longer available, so give your {action} now."


def _actions_section(options: list[tuple[str, str]], *, final_action: str) -> str:
    if len(options) == 1:
        tag, usage = options[0]
        return f"{_THINK_FIRST} Then end your reply with <{tag}>...</{tag}>.\n{usage}"
    listed = "\n\n".join(
        f"{number}. <{tag}>...</{tag}>\n   {usage}"
        for number, (tag, usage) in enumerate(options, start=1)
    )
    return (
        f"Your turn. {_THINK_FIRST} Then end your reply with exactly one of these "
        f"actions, and write nothing after it:\n\n{listed}\n\n"
        f"Take one action per turn: a reply that contains a tool call and also "
        f"<{final_action}> is rejected."
    )


def _messages(system_prompt: str | None, sections: Sequence[str]) -> list[ChatMessage]:
    user = "\n\n".join(section for section in sections if section)
    messages = [ChatMessage(role="system", content=system_prompt)] if system_prompt else []
    messages.append(ChatMessage(role="user", content=user))
    return messages
