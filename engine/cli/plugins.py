"""`apollo plugins`: what is loaded (tools, domains, graders, rewards) and where it came from."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import Any

from engine.config.settings import Settings
from engine.plugins import ENTRY_POINT_GROUP, check_settings, load_plugins


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "plugins", help="list loaded tools, domains, graders and rewards, and the plugin each came from")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=_cmd_plugins)


def _cmd_plugins(args: argparse.Namespace, settings: Settings) -> int:
    """Exit 0 with the listing; a bad plugin raises PluginError (one line, exit 1)."""
    plugins = load_plugins(settings, reload=True)
    run = check_settings(settings, plugins)
    entries = plugins.entries()
    if args.json:
        print(json.dumps({"plugins": [asdict(e) for e in plugins.plugins],
                          "extensions": [asdict(e) for e in entries],
                          "run": {key: run["episode"][key] for key in ("domain", "tools", "grading", "reward")}}))
        return 0
    if plugins.plugins:
        print("plugins:")
        for entry in plugins.plugins:
            print(f"  {entry.name}  ({entry.source})")
    else:
        print(f"plugins: none (install a package with an {ENTRY_POINT_GROUP!r} entry point, "
              "or list module:attribute paths under `plugins:` in the config)")
    width = max(len(e.name) for e in entries)
    print()
    for kind in ("tool", "domain", "grader", "reward"):
        print(f"{kind}s:")
        for entry in (e for e in entries if e.kind == kind):
            print(f"  {entry.name:<{width}}  {entry.plugin:<12}  {entry.detail}")
    episode = run["episode"]
    print(f"\nruns use: domain {episode['domain']}, tools {', '.join(episode['tools']) or '(none)'}, "
          f"grader {episode['grading']}, reward {episode['reward']}")
    return 0
