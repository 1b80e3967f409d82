"""The scripted model: rules, step awareness, labelling, and bad script files."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.models.scripted import (
    ScriptedModelClient,
    ScriptError,
    load_script,
    parse_script,
    step_of,
)
from events.model import ChatMessage, SamplingParams
from handlers.ports import ModelError

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "scripted" / "demo.json"
GSM8K = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "gsm8k.jsonl"
JANET = (
    "Janet\u2019s ducks lay 16 eggs per day. She eats three for breakfast every morning and "
    "bakes muffins for her friends every day with four. She sells the remainder at the "
    "farmers' market daily for $2 per fresh duck egg. How much in dollars does she make "
    "every day at the farmers' market?"
)


def _user(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=text)


def _tool_response(stdout: str) -> str:
    return "\n<tool_response>" + json.dumps({"stdout": stdout, "stderr": ""}) + "</tool_response>\n"


def _run_code(reply: str) -> str:
    """Run the reply's python block the way a sandbox would and return its stdout."""
    code = reply.split("<python_code>", 1)[1].split("</python_code>", 1)[0]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout


def _solve(client: ScriptedModelClient, question: str, *, flattened: bool) -> str:
    """Two steps: a python call, its tool response, then the final reply."""
    first = client.reply_for([_user(question)])
    observation = _tool_response(_run_code(first))
    if flattened:
        return client.reply_for([_user(f"{question}\nHistory:\n{first}{observation}")])
    return client.reply_for(
        [_user(question), ChatMessage(role="assistant", content=first), _user(observation)]
    )


@pytest.mark.parametrize("flattened", [True, False])
def test_demo_solves_janets_ducks_with_python(flattened: bool) -> None:
    """The demo computes 18 in python, then answers with the tool's result."""
    client = ScriptedModelClient.from_file(DEMO, role="policy")
    first = client.reply_for([_user(JANET)])
    assert "<python_code>" in first and "<think>" in first
    assert _run_code(first) == "RESULT=18\n"
    assert _solve(client, JANET, flattened=flattened).endswith("<answer>\\boxed{18}</answer>")


def test_demo_matches_the_first_gsm8k_problem_verbatim() -> None:
    """The rule matches the shipped dataset's first question exactly as stored."""
    if not GSM8K.exists():
        pytest.skip("the shared gsm8k file is not on this machine")
    question = json.loads(GSM8K.read_text(encoding="utf-8").splitlines()[0])["question"]
    reply = _solve(ScriptedModelClient.from_file(DEMO), question, flattened=True)
    assert reply.endswith("\\boxed{18}</answer>")


@pytest.mark.parametrize(
    ("question", "answer"),
    [("What is 6 times 7?", "42"), ("What is 10 minus 12.5?", "-2.5"), ("What is 9 plus 1?", "10")],
)
def test_demo_does_small_arithmetic_through_python(question: str, answer: str) -> None:
    """'What is A op B?' questions are computed by the python step, not canned."""
    reply = _solve(ScriptedModelClient.from_file(DEMO), question, flattened=False)
    assert reply.endswith(f"<answer>\\boxed{{{answer}}}</answer>")


def test_demo_labels_its_guess_for_unknown_problems() -> None:
    """Any other problem runs one python step and then gives a labelled guess."""
    reply = _solve(
        ScriptedModelClient.from_file(DEMO), "Prove Fermat's last theorem.", flattened=True
    )
    assert "scripted guess" in reply
    assert reply.endswith("<answer>\\boxed{0}</answer>")


def test_role_rules_apply_only_to_their_role() -> None:
    """A verifier gets a report; the policy never sees the verifier's rules."""
    verifier = ScriptedModelClient.from_file(DEMO, role="verifier")
    assert "<report>" in verifier.reply_for([_user(f"{JANET}\nsolution: \\boxed{{18}}")])
    assert "<report>" not in ScriptedModelClient.from_file(DEMO).reply_for([_user(JANET)])


async def test_model_is_labelled_scripted_with_the_file_name() -> None:
    """Replies carry the model name scripted:<file name>, and calls are counted."""
    client = ScriptedModelClient.from_file(DEMO)
    reply = await client.complete([_user(JANET)], SamplingParams())
    assert reply.model == "scripted:demo.json"
    assert (reply.finish_reason, client.calls) == ("stop", 1)


def test_reply_list_is_served_by_step() -> None:
    """A list script answers the nth step with the nth reply, then fails clearly."""
    client = ScriptedModelClient(parse_script(["one", "two"]), name="list.json")
    assert client.reply_for([_user("q")]) == "one"
    assert client.reply_for([_user("q"), _user(_tool_response("1"))]) == "two"
    with pytest.raises(ModelError, match="needs more") as caught:
        client.reply_for(
            [_user('q <tool_response>{"result": "a"}</tool_response> <tool_response>{"result": "b"}</tool_response>')]
        )
    assert caught.value.kind == "bad_response"


def test_rules_with_step_and_default() -> None:
    """An exact step rule wins at that step; the default answers anything else."""
    script = parse_script(
        {"rules": [{"match": "apples", "step": 1, "reply": "one"}], "default": "fallback"}
    )
    client = ScriptedModelClient(script)
    assert client.reply_for([_user("apples")]) == "fallback"
    assert client.reply_for([_user('apples <tool_response>{"result": "x"}</tool_response>')]) == "one"


def test_no_matching_rule_is_a_bad_response() -> None:
    """Without a default, an unmatched prompt fails with a message naming the script."""
    client = ScriptedModelClient(parse_script({"rules": [{"match": "x", "reply": "y"}]}), name="s")
    with pytest.raises(ModelError, match="scripted:s") as caught:
        client.reply_for([_user("nothing here")])
    assert caught.value.kind == "bad_response"


def test_placeholders_fill_named_groups_and_leave_others() -> None:
    """${name} takes the named group; unknown names and LaTeX dollars stay as written."""
    script = parse_script({"rules": [{"match": r"(?P<n>\d+) cats", "reply": "$$ ${n} ${m} $5"}]})
    assert ScriptedModelClient(script).reply_for([_user("3 cats")]) == "$$ 3 ${m} $5"


def test_step_counts_tool_roles_and_assistant_turns() -> None:
    """The step is the larger of assistant turns and tool responses in the prompt."""
    assert step_of([_user("q")]) == 0
    assert step_of([_user("q"), ChatMessage(role="tool", content="1")]) == 1
    assistant = ChatMessage(role="assistant", content="<tool_response>quoted</tool_response>")
    assert step_of([_user("q"), assistant, assistant]) == 2


async def test_concurrent_conversations_each_get_their_own_reply() -> None:
    """Replies depend only on the prompt, so interleaved runs are not mixed up."""
    client = ScriptedModelClient.from_file(DEMO)
    prompts = [[_user(f"What is {i} times 2?")] for i in range(20)]
    replies = await asyncio.gather(*(client.complete(p, SamplingParams()) for p in prompts))
    for i, reply in enumerate(replies):
        assert f"a, b = {i}, 2" in reply.text


def test_yaml_scripts_load(tmp_path: Path) -> None:
    """YAML files work like JSON ones."""
    path = tmp_path / "s.yaml"
    path.write_text("rules:\n  - match: hello\n    reply: hi there\n", encoding="utf-8")
    assert ScriptedModelClient.from_file(path).reply_for([_user("hello")]) == "hi there"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "not valid JSON"),
        ('{"rules": [{"match": "(", "reply": "x"}]}', "bad regex"),
        ('{"rules": [{"reply": "x", "colour": "red"}]}', "malformed"),
        ('{"rules": [{"match": "x"}]}', "malformed"),
        ('{"rules": [{"reply": "x", "when": "sometimes"}]}', "malformed"),
        ("42", "malformed"),
        ("[1, 2]", "malformed"),
        ("{}", "no replies"),
        ("null", "malformed"),
    ],
)
def test_bad_script_files_raise_a_clear_error(tmp_path: Path, content: str, problem: str) -> None:
    """Malformed scripts fail at load time naming the file and the problem."""
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ScriptError, match=problem) as caught:
        load_script(path)
    assert "bad.json" in str(caught.value)


def test_missing_script_file_is_a_script_error(tmp_path: Path) -> None:
    """A path that does not exist says it cannot be read."""
    with pytest.raises(ScriptError, match="cannot read"):
        load_script(tmp_path / "absent.json")
