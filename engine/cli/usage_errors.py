"""Unknown flags are refused by the command they were given to: its usage, and the flag meant.

argparse hands a subcommand's unknown arguments back to the top-level parser, which prints
the top-level usage and no suggestion; ``apollo runs --limt 3`` should say ``apollo runs:
error: unrecognized arguments: --limt 3 (did you mean --limit?)``.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Sequence


def parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """``parser.parse_args(argv)``, with unknown arguments refused by the subcommand that got them."""
    args, extras = parser.parse_known_args(argv)
    if extras:
        owner = _subcommands(parser).get(getattr(args, "command", None) or "", parser)
        owner = _action_given(owner, argv, extras)
        owner.error(f"unrecognized arguments: {' '.join(extras)}{_suggestions(owner, extras)}")
    return args


def command_parser(parser: argparse.ArgumentParser, command: str | None) -> argparse.ArgumentParser:
    """The parser of ``command`` (its usage goes with an error it refuses), else ``parser``."""
    return _subcommands(parser).get(command or "", parser)


def _action_given(owner: argparse.ArgumentParser, argv: Sequence[str] | None,
                  extras: Sequence[str]) -> argparse.ArgumentParser:
    """The parser of the action named after the command (``streams ensure``, ``rag query``), if one was."""
    words = [word for word in (sys.argv[1:] if argv is None else argv) if word not in extras]
    while actions := _subcommands(owner):
        given = next((word for word in words if word in actions), None)
        if given is None:
            return owner
        owner = actions[given]
    return owner


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse keeps its subparsers nowhere else
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _suggestions(parser: argparse.ArgumentParser, extras: Sequence[str]) -> str:
    """`` (did you mean --limit?)`` for each unknown flag close to one the command has."""
    flags = [flag for action in parser._actions for flag in action.option_strings]
    meant = []
    for extra in extras:
        if not extra.startswith("-"):
            continue
        close = difflib.get_close_matches(extra.split("=", 1)[0], flags, n=1, cutoff=0.6)
        if close and close[0] != extra.split("=", 1)[0]:  # the flag itself, misplaced, is no typo
            meant.append(close[0])
    return f" (did you mean {', '.join(dict.fromkeys(meant))}?)" if meant else ""
