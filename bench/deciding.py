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
Then what recording a step's prompt as a delta costs (``events.text_delta.delta_messages``
against the step before) beside rendering that prompt, for the same 16-turn run's prompts.

    python bench/deciding.py [--runs N]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from pathlib import Path

# Run as a script, this file's folder heads sys.path and its name would hide packages.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

# ruff: noqa: E402 (imports follow the sys.path fix)
from engine.testing.recorded_runs import recorded_run, spec_for
from events.model import ModelCallRequested
from events.text_delta import delta_messages
from handlers.episode.prompts import HistoryStep, render_policy_prompt
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
    delta_cost()


def delta_cost(turns: int = 16, rounds: int = 20) -> None:
    """µs to make each step's delta, beside µs to render the prompt it records."""
    events = recorded_run(spec_for(0, turns=turns))
    prompts = [e.messages for e in events if isinstance(e, ModelCallRequested)]
    steps = [HistoryStep(action="a reply " * 40, observation="<tool_response>42</tool_response>")] * (turns - 1)
    started = time.perf_counter()
    for _ in range(rounds):
        for step in range(1, turns):
            render_policy_prompt("What is 6 times 7?", tools=["python_code"], history=steps[:step],
                                 history_length=turns)
    render_us = (time.perf_counter() - started) * 1e6 / (rounds * (turns - 1))
    started = time.perf_counter()
    for _ in range(rounds):
        for before, after in itertools.pairwise(prompts):
            delta_messages(before, after)
    delta_us = (time.perf_counter() - started) * 1e6 / (rounds * (turns - 1))
    size = sum(len(m.content) for m in prompts[-1])
    print(f"a step's delta (prompts up to {size:,} characters): {delta_us:.0f} µs to make, rendering the prompt "
          f"{render_us:.0f} µs: {delta_us / render_us:.2f}x a render", flush=True)


if __name__ == "__main__":
    main()
