"""`apollo schema`: the JSON Schema of every event, for clients in any language."""

from __future__ import annotations

import argparse
import json
from typing import Any

import msgspec

from events.catalog import any_event_type


def register(subparsers: Any) -> None:
    schema = subparsers.add_parser("schema", help="JSON Schema of every event")
    schema.set_defaults(handler=_cmd_schema)


def _cmd_schema(args: argparse.Namespace) -> int:
    print(json.dumps(msgspec.json.schema(any_event_type()), indent=2))
    return 0
