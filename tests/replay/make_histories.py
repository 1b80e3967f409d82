"""Record the golden histories in tests/replay/histories (run once; the files are checked in).

    .venv/bin/python -m tests.replay.make_histories

Good runs come from the real routing table (in-memory log, scripted replies, a fake python
tool); the ``edited_*`` files are copies of a good one with one recorded decider output
changed by hand, as a changed decider would have recorded it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from engine.app.operations import submission
from engine.cli.replay import history_lines
from engine.testing.harness import EchoPython, make_settings, new_memory_log, run_until_done, services
from tests.episode.test_episode_flow import Replies

HERE = Path(__file__).parent / "histories"

RUNS = {
    "good_code_then_answer": [
        "<think>compute</think><python_code>print(6*7)</python_code>",
        "<think>done</think><answer>\\boxed{42}</answer>",
    ],
    "good_invalid_code_answer": [
        "I think the answer is 42 but I will not use a tag",
        "<python_code>print(6*7)</python_code>",
        "<answer>\\boxed{42}</answer>",
    ],
}


async def record(name: str, replies: list[str]) -> str:
    log = new_memory_log()
    svc = services(make_settings(), models=Replies(replies), tools={"python_code": EchoPython()})
    await log.append(submission(f"golden-{name.replace('_', '-')}", "What is 6 times 7?", ground_truth="42"))
    run_id = f"golden-{name.replace('_', '-')}"
    await run_until_done(log, svc, [run_id])
    return history_lines(await log.read_run(run_id))


def edited(text: str, tag: str, change: dict) -> str:
    """The same history with the first event of ``tag`` changed."""
    out, done = [], False
    for line in text.splitlines():
        row = json.loads(line)
        if not done and row["event"]["type"] == tag:
            for key, value in change.items():
                if key == "prompt":
                    row["event"]["messages"][-1]["content"] += value
                else:
                    row["event"][key] = value
            done = True
        out.append(json.dumps(row))
    return "\n".join(out) + "\n"


async def main() -> None:
    HERE.mkdir(exist_ok=True)
    texts = {name: await record(name, replies) for name, replies in RUNS.items()}
    for name, text in texts.items():
        (HERE / f"{name}.ndjson").write_text(text)
    base = texts["good_code_then_answer"]
    code_action = {"action": "<python_code>print(42)</python_code>"}
    (HERE / "edited_action_parsed.ndjson").write_text(edited(base, "action.parsed", code_action))
    (HERE / "edited_prompt.ndjson").write_text(edited(base, "model.call_requested", {"prompt": " Be brief."}))


if __name__ == "__main__":
    asyncio.run(main())
