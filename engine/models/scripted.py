"""A model that answers from a script file: for demos and tests, never for real work.

A script is JSON or YAML in one of two shapes.

A list of replies, served by step (the number of tool responses already in the prompt,
or of assistant turns, whichever is larger)::

    ["<python_code>print(6*7)</python_code>", "<answer>\\boxed{42}</answer>"]

Or rules, tried in order; the first that applies gives the reply::

    {"rules": [{"match": "(?P<a>\\d+) times (?P<b>\\d+)", "when": "first",
                "reply": "<python_code>print(${a} * ${b})</python_code>"}],
     "default": "<answer>\\boxed{0}</answer>"}

A rule applies when its ``match`` regex (searched, case-insensitive, across the text of
every non-assistant message) is found, its ``when`` holds (``first``: no tool response
yet; ``after_tool``: at least one; ``any``, the default), its optional ``step`` equals
the step, and its optional ``role`` equals the client's role. ``${name}`` in a reply is
replaced by the regex's named group ``name``. The reply is a pure function of the
prompt, so concurrent conversations each get the right one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec
import yaml

from engine.errors import EngineError
from events.model import ChatMessage, SamplingParams
from handlers.ports import ModelError, ModelReply

When = Literal["any", "first", "after_tool"]
_TOOL_RESPONSE = re.compile(r"<tool_response>\s*[\[{]", re.IGNORECASE)
"""A real tool response carries a JSON body; prompt instructions that merely name the tag do not count."""
_PLACEHOLDER = re.compile(r"\$\{(\w+)\}")


class ScriptError(ValueError, EngineError):
    """A script file is missing or malformed."""


class Rule(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One scripted answer and the prompts it applies to."""

    reply: str
    match: str = ""
    """Regex searched in the non-assistant text; empty matches everything."""
    when: When = "any"
    step: int | None = None
    role: str | None = None


class Script(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A parsed script: ordered ``replies`` or ``rules`` with a ``default``."""

    replies: list[str] = []
    rules: list[Rule] = []
    default: str | None = None


def load_script(path: str | Path) -> Script:
    """Read a JSON or YAML script; raise :class:`ScriptError` saying what is wrong."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        msg = f"cannot read scripted model file {str(file)!r}: {exc.strerror or exc}"
        raise ScriptError(msg) from exc
    try:
        data = json.loads(text) if file.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        msg = f"scripted model file {str(file)!r} is not valid JSON/YAML: {exc}"
        raise ScriptError(msg) from exc
    return parse_script(data, source=str(file))


def parse_script(data: Any, source: str = "<script>") -> Script:
    """Validate already-decoded script data (a list of replies or a rules mapping)."""
    if isinstance(data, list):
        data = {"replies": data}
    try:
        script = msgspec.convert(data, Script)
    except msgspec.ValidationError as exc:
        msg = f"scripted model file {source!r} is malformed: {exc}"
        raise ScriptError(msg) from exc
    for rule in script.rules:
        try:
            re.compile(rule.match)
        except re.error as exc:
            msg = f"scripted model file {source!r}: bad regex {rule.match!r}: {exc}"
            raise ScriptError(msg) from exc
    if not (script.replies or script.rules or script.default is not None):
        msg = f"scripted model file {source!r} has no replies, rules or default"
        raise ScriptError(msg)
    return script


def step_of(messages: Sequence[ChatMessage]) -> int:
    """How many tool round trips the prompt already holds (flattened or multi-turn)."""
    assistant_turns = sum(1 for m in messages if m.role == "assistant")
    tool_responses = sum(
        1 if m.role == "tool" else len(_TOOL_RESPONSE.findall(m.content))
        for m in messages
        if m.role != "assistant"
    )
    return max(assistant_turns, tool_responses)


class ScriptedModelClient:
    """Serves replies from a :class:`Script`; its model name is ``scripted:<file name>``."""

    def __init__(self, script: Script, *, name: str = "inline", role: str | None = None) -> None:
        self.script = script
        self.model = f"scripted:{name}"
        self.role = role
        self.calls = 0
        """How many completions were served (tests assert replay makes none)."""
        self._patterns = [re.compile(r.match, re.IGNORECASE | re.DOTALL) for r in script.rules]

    @classmethod
    def from_file(cls, path: str | Path, *, role: str | None = None) -> ScriptedModelClient:
        """Load a script file; the model is labelled with the file's name."""
        return cls(load_script(path), name=Path(path).name, role=role)

    async def complete(self, messages: Sequence[ChatMessage], params: SamplingParams) -> ModelReply:
        """The scripted reply for this prompt, or ``ModelError(bad_response)`` if none."""
        del params  # a script ignores sampling: the same prompt always gets the same reply
        self.calls += 1
        return ModelReply(text=self.reply_for(messages), model=self.model, finish_reason="stop")

    def reply_for(self, messages: Sequence[ChatMessage]) -> str:
        """The reply text for ``messages`` (synchronous; the fake server uses it too)."""
        step = step_of(messages)
        if self.script.replies:
            return self._reply_by_step(step)
        prompt = "\n".join(m.content for m in messages if m.role != "assistant")
        for rule, pattern in zip(self.script.rules, self._patterns, strict=True):
            if not self._applies(rule, step):
                continue
            found = pattern.search(prompt)
            if found is not None:
                return _fill(rule.reply, found)
        if self.script.default is not None:
            return self.script.default
        msg = f"{self.model}: no scripted rule matches this prompt (step {step})"
        raise ModelError("bad_response", msg)

    def _reply_by_step(self, step: int) -> str:
        if step < len(self.script.replies):
            return self.script.replies[step]
        if self.script.default is not None:
            return self.script.default
        count = len(self.script.replies)
        msg = f"{self.model}: the script has {count} replies; step {step} needs more"
        raise ModelError("bad_response", msg)

    def _applies(self, rule: Rule, step: int) -> bool:
        if rule.role is not None and rule.role != self.role:
            return False
        if rule.step is not None and rule.step != step:
            return False
        if rule.when == "first":
            return step == 0
        if rule.when == "after_tool":
            return step > 0
        return True


def _fill(reply: str, found: re.Match[str]) -> str:
    """Replace ``${name}`` with the named group; unknown names are left as written."""
    groups = found.groupdict()

    def value(placeholder: re.Match[str]) -> str:
        name = placeholder.group(1)
        captured = groups.get(name)
        return placeholder.group(0) if captured is None else captured

    return _PLACEHOLDER.sub(value, reply)
