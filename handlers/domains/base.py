"""What a task domain is: the prompts, actions, answer extraction and grader of one kind of task.

A domain is data plus one pure function, so deciders can look it up by the name a run
recorded and stay replayable. Deciders find it in the catalog their context carries
(:mod:`handlers.catalog`): the built-in domains plus the plugins the engine loaded.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass

from handlers.grading.asked import question_asked

Extractor = Callable[[str, "str | None"], "str | None"]
"""``(reply text, <answer> body or None) -> final answer or None``."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


@dataclass(frozen=True)
class Domain:
    """One kind of task: how it is asked, answered, extracted and graded.

    Attributes:
        name: what ``episode.domain`` names, e.g. ``math`` or ``multiple_choice``.
        extract: the final answer of a reply (the text to grade), or ``None``.
        grader: name of the grader that scores this domain's answers.
        intro: the policy prompt's opening line; ``None`` keeps the math wording.
        answer_usage: how to write ``<answer>`` in this domain; ``None`` keeps math's.
        default_tools: tool tags offered when the run names none (built-ins still
            obey ``enable_python_code`` / ``enable_local_rag``).
        description: one line for ``apollo plugins``.
    """

    name: str
    extract: Extractor
    grader: str
    intro: str | None = None
    answer_usage: str | None = None
    default_tools: tuple[str, ...] = ()
    description: str = ""

    def final_answer(self, reply: str, answer: str | None, question: object = None) -> str | None:
        """The reply's final answer as :attr:`extract` reads it, with the problem's ``question`` known while it
        reads (:func:`handlers.grading.asked.question_asked`: a final box whose subject names another quantity
        than the one asked for, ``Its cube is``, is not the answer). Deciders, regrades and benchmarks call this."""
        with question_asked(question):
            return self.extract(reply, answer)

    def check(self) -> None:
        """Raise ``ValueError`` saying what is wrong with this definition."""
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            msg = f"domain name must be a plain identifier, got {self.name!r}"
            raise ValueError(msg)
        if not callable(self.extract) or not _takes_two(self.extract):
            msg = f"domain {self.name!r}: extract must be a function (reply, answer) -> str | None"
            raise ValueError(msg)
        if not isinstance(self.grader, str) or not self.grader:
            msg = f"domain {self.name!r}: grader must name a registered grader"
            raise ValueError(msg)
        for text, label in ((self.intro, "intro"), (self.answer_usage, "answer_usage")):
            if text is not None and (not isinstance(text, str) or not text.strip()):
                msg = f"domain {self.name!r}: {label} must be non-empty text or None"
                raise ValueError(msg)
        if isinstance(self.default_tools, str) or not all(isinstance(t, str) for t in self.default_tools):
            msg = f"domain {self.name!r}: default_tools must be a tuple of tool tags"
            raise ValueError(msg)


def _takes_two(function: Callable[..., object]) -> bool:
    try:
        inspect.signature(function).bind("reply", None)
    except TypeError:
        return False
    except ValueError:  # builtins without a signature: trust them
        return True
    return True
