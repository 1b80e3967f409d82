"""NATS header parsing: the engine's parser against nats-py's own, on the headers a worker receives.

Every delivery and every append's acknowledgement a worker receives carries a header block;
``engine/nats/header_lines.py`` parses them as nats-py 2.16 does (same dict, compared in
tests/engine/test_header_lines.py) without its generator over each name's characters. Times,
in the same run, both parsers on the blocks a worker sees: a delivered event appended on its
run's expected sequence (three headers), one appended plainly (one header) and a status block
with two headers. Prints microseconds per block for each and the ratio nats-py/engine (how many
times cheaper); then what that is per episode at the given number of blocks per episode.

    python bench/headers.py [--blocks 20000] [--per-episode 18]
"""

from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path

# Run as a script, this file's folder heads sys.path and its name would hide packages.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# ruff: noqa: E402 (imports follow the sys.path fix)
from engine.nats import header_lines

BLOCKS = {
    "conditional append": (
        b"Nats-Msg-Id: 125f4207-55d2-42ff-9c0b-766cee40c1fb\r\n"
        b"Nats-Expected-Last-Subject-Sequence: 10734\r\n"
        b"Nats-Expected-Last-Subject-Sequence-Subject: apollo.run.bench-p-638.>\r\n\r\n"
    ),
    "plain append": b"Nats-Msg-Id: 8a9e45a3-b814-5fda-8bbe-49e3a44a0e3e\r\n\r\n",
    "status": b"Nats-Last-Consumer: 1016\r\nNats-Last-Stream: 1024\r\n\r\n",
}


def per_block_us(parse, raw: bytes, blocks: int) -> float:
    """The fastest of five timings, in microseconds per block (the least disturbed run)."""
    return min(timeit.repeat(lambda: parse(raw), number=blocks, repeat=5)) / blocks * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=20_000, help="blocks parsed per timing")
    parser.add_argument("--per-episode", type=int, default=18,
                        help="header blocks a worker parses per two-turn episode (deliveries and acknowledgements)")
    args = parser.parse_args()
    library = header_lines.library_parser()
    if library is None:
        raise SystemExit("this nats-py has no header parser of the shape the engine mirrors: nothing to compare")
    saved = []
    for name, raw in BLOCKS.items():
        assert header_lines.parse_header_lines(raw) == library(raw)
        theirs = per_block_us(library, raw, args.blocks)
        ours = per_block_us(header_lines.parse_header_lines, raw, args.blocks)
        saved.append(theirs - ours)
        print(f"{name:<20} nats-py {theirs:6.2f} us | engine {ours:6.2f} us | ratio {theirs / ours:.2f}x cheaper",
              flush=True)
    print(f"at {args.per_episode} blocks per episode (as a conditional append): "
          f"{saved[0] * args.per_episode:.0f} us of CPU saved per episode")


if __name__ == "__main__":
    main()
