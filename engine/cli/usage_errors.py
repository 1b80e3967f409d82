"""Unknown flags are refused by the command they were given to: its usage, and the flag meant.

argparse hands a subcommand's unknown arguments back to the top-level parser, which prints
the top-level usage and no suggestion; ``apollo runs --limt 3`` should say ``apollo runs:
error: unrecognized arguments: --limt 3 (did you mean --limit?)``.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Sequence


def parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """``parser.parse_args(argv)``, with unknown arguments refused by the subcommand that got them."""
    args, extras = parser.parse_known_args(argv)
    if extras:
        owner = _subcommands(parser).get(getattr(args, "command", None) or "", parser)
        owner.error(f"unrecognized arguments: {' '.join(extras)}{_suggestions(owner, extras)}")
    return args


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
        if close:
            meant.append(close[0])
    return f" (did you mean {', '.join(dict.fromkeys(meant))}?)" if meant else ""
