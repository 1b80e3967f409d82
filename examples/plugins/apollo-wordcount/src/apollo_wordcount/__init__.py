"""An apollo plugin in its own package: installing it is all it takes to use it.

``pip install -e examples/plugins/apollo-wordcount`` registers the entry point
``wordcount`` in the group ``apollo.plugins``; apollo then offers the model a
``<word_count>`` tool, and ``episode.grading: keywords`` / ``episode.reward:
short_answers`` become available.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.plugins import Grade, Plugin, RewardInput, grader, reward, tool


@tool(usage=(
    "Count the words, lines and characters of a text. Put the text itself in the "
    "block, for example <word_count>the quick brown fox</word_count>; the counts "
    "come back as JSON inside <tool_response> </tool_response>."
), timeout=5)
async def word_count(text: str) -> dict[str, int]:
    """Count words, lines and characters (raw text argument)."""
    return {"words": len(text.split()), "lines": len(text.splitlines()) or 1, "characters": len(text)}


@grader("keywords", description="1 when every comma-separated keyword of the truth appears in the answer")
def keywords(answer: str, ground_truth: str, metadata: Mapping[str, Any]) -> Grade:
    wanted = [word.strip().lower() for word in ground_truth.split(",") if word.strip()]
    missing = [word for word in wanted if word not in answer.lower()]
    return Grade(score=0.0 if missing else 1.0, method="keywords", detail=f"missing: {missing}" if missing else "")


@reward("short_answers", description="the grade, minus 0.1 per step after the first")
def short_answers(result: RewardInput) -> float:
    return max(0.0, result.score - 0.1 * max(0, result.steps - 1))


plugin = Plugin(
    name="wordcount",
    description="word_count tool, keywords grader, short_answers reward",
    tools=[word_count],
    graders=[keywords],
    rewards=[short_answers],
)
