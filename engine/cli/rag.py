"""``apollo rag build`` and ``apollo rag query``: the CLI face of the knowledge base."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from engine.config.settings import Settings, default_data_dir
from engine.console.argtypes import whole_number
from engine.rag.kb import KnowledgeBase
from engine.rag.libraries import SUPPORTED_LIBRARIES, UnknownLibraryError
from engine.rag.render import render_hits
from engine.rag.request import MAX_TOP_K


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``rag`` command group to a parent parser's subcommands."""
    rag = subparsers.add_parser("rag", help="offline retrieval over the math libraries' docs")
    commands = rag.add_subparsers(dest="rag_command", required=True)

    build = commands.add_parser("build", help="(re)build the knowledge base")
    _data_dir_option(build)
    build.add_argument(
        "--libraries",
        nargs="+",
        choices=SUPPORTED_LIBRARIES,
        default=list(SUPPORTED_LIBRARIES),
        metavar="LIB",
        help=f"libraries to build (default: all of {', '.join(SUPPORTED_LIBRARIES)})",
    )
    build.set_defaults(handler=run_build)

    query = commands.add_parser("query", help="search one library's documentation")
    query.add_argument("library", choices=SUPPORTED_LIBRARIES, metavar="LIBRARY")
    query.add_argument("query", metavar="QUERY")
    query.add_argument("--top-k", type=_top_k, default=5)
    query.add_argument("--bm25", action="store_true", help="lexical ranking only")
    query.add_argument("--json", action="store_true", help="print hits as JSON")
    _data_dir_option(query)
    query.set_defaults(handler=run_query)

    status = commands.add_parser("status", help="embedder and stored-build report")
    _data_dir_option(status)
    status.set_defaults(handler=run_status)


def run_build(args: argparse.Namespace, settings: Settings | None = None) -> int:
    """Build the chosen libraries, one line per library."""
    kb = KnowledgeBase(_data_dir(args, settings), progress=_progress_printer())
    if kb.embedder is None:
        print("warning: embedding model unavailable, building BM25-only", file=sys.stderr)
    for library in args.libraries:
        started = time.monotonic()
        index = kb.index(library, rebuild=True)
        print(f"{library}: {len(index.entries)} entries in {time.monotonic() - started:.1f}s")
    print(f"stored in {kb.data_dir}")
    return 0


def run_query(args: argparse.Namespace, settings: Settings | None = None) -> int:
    """Print the hits for one query, as text or JSON (a first query builds the index, saying so)."""
    kb = KnowledgeBase(_data_dir(args, settings), progress=_progress_printer())
    try:
        hits = kb.search(args.library, args.query, args.top_k, "bm25" if args.bm25 else "fused")
    except (UnknownLibraryError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        rows = [
            {
                "name": h.entry.name,
                "aliases": list(h.entry.aliases),
                "kind": h.entry.kind,
                "signature": h.entry.signature,
                "score": round(h.score, 6),
                "summary": h.entry.doc.split("\n\n", 1)[0],
            }
            for h in hits
        ]
        print(json.dumps(rows, indent=2))
    else:
        print(render_hits(hits))
    return 0


def run_status(args: argparse.Namespace, settings: Settings | None = None) -> int:
    """Print the doctor-style status as JSON."""
    print(json.dumps(KnowledgeBase(_data_dir(args, settings)).status(), indent=2))
    return 0


def _data_dir(args: argparse.Namespace, settings: Settings | None) -> Path | None:
    """``--data-dir``, else ``rag`` under the engine's data dir (APOLLO_DATA_DIR), where the
    workers' local_rag tool looks too (no settings: the knowledge base's own default)."""
    if args.data_dir is not None or settings is None:
        return args.data_dir
    return default_data_dir(settings) / "rag"


def _progress_printer() -> Callable[[str], None]:
    """Build stages as ``apollo rag:`` lines on standard error, with the seconds so far."""
    started = time.monotonic()

    def say(line: str) -> None:
        print(f"apollo rag: {line} ({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)

    return say


def _data_dir_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="where the knowledge base lives (default: rag/ under APOLLO_DATA_DIR or the user data dir)",
    )


_top_k = whole_number(1, MAX_TOP_K)
