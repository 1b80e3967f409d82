"""What deciding along a run costs the episode projection: kept folds against a fold from scratch.

Deciders call ``handlers.projections.episode.episode_state`` with the run's history so far on
every event. This replays that pattern over whole runs as the engine records them
(:mod:`engine.testing.recorded_runs`, prompts as deltas, every step in the prompt's window),
at 4, 16 and 32 turns, and times in the same run:

* baseline: folding each history from its first event (what every decision paid before folds
  were kept);
* kept: ``episode_state`` as the deciders call it, which folds only what a history adds to the
  fold it kept.

Prints ms per run of each and the ratio baseline/kept (how many times cheaper deciding is).

    python bench/deciding.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

# Run as a script, this file's folder heads sys.path and its name would hide packages.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

# ruff: noqa: E402 (imports follow the sys.path fix)
from engine.testing.recorded_runs import recorded_run, spec_for
from handlers.projections import episode as projection
from handlers.projections.episode import EpisodeState, episode_state, evolve


def _from_scratch(events: list) -> None:
    for count in range(1, len(events) + 1):
        state = EpisodeState()
        for event in events[:count]:
            state = evolve(state, event)


def _kept(events: list) -> None:
    for count in range(1, len(events) + 1):
        episode_state(events[:count])


def _time(decide, runs: list[list]) -> float:
    """Median ms per run over three passes."""
    passes = []
    for _ in range(3):
        projection._FOLDED.clear()
        started = time.perf_counter()
        for events in runs:
            decide(events)
        passes.append((time.perf_counter() - started) * 1000 / len(runs))
    return statistics.median(passes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40, help="runs per size (default 40)")
    args = parser.parse_args()
    for turns in (4, 16, 32):
        runs = [recorded_run(spec_for(number * 6, turns=turns)) for number in range(args.runs)]  # completed runs
        scratch, kept = _time(_from_scratch, runs), _time(_kept, runs)
        print(f"{turns:>2} turns ({len(runs[0])} events): from scratch {scratch:7.2f} ms/run, kept folds "
              f"{kept:6.2f} ms/run: {scratch / kept:.1f}x cheaper", flush=True)


if __name__ == "__main__":
    main()
