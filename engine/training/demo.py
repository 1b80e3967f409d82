"""`apollo train --demo`: GRPO on a real model, every rollout through the engine.

One step:

1. the step's problems are submitted (``group_size`` runs each, one GRPO group per problem)
   to the embedded nats-server; in-process workers run the single-turn episodes, whose
   model calls go over HTTP to the rollout server (llama.cpp's, or the endpoint in the
   trainer: :mod:`engine.training.rollout_servers`), which samples from the weights of the
   current policy version and returns token ids and logprobs;
2. the sealed trajectories come back through the exactly-once subscription
   (``RolloutSubscription`` on a durable JetStream consumer), as whole groups;
3. verl's GRPO advantages and policy loss, one AdamW step (:class:`Trainer`);
4. a checkpoint (weights, optimiser, subscription cursor), then the batch is acknowledged,
   each trajectory's run recording ``rollout.trained`` (trainer, step, policy versions);
5. ``policy.updated`` is appended; the serving side (``PolicySync`` with the server's loader)
   makes the server serve the checkpoint and records ``policy.activated``; only then does the
   next step submit.

Everything lives under ``--out``: the engine's data dir (the NATS store included), the
checkpoints, ``metrics.jsonl`` and ``reward.png``. Started again with the same ``--out``,
the demo restores the last checkpoint and goes on: trajectories trained before the kill
are in the restored cursor (dropped if redelivered), the others are redelivered and trained
once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import socket
import time
from pathlib import Path
from typing import Any, TextIO

import msgspec

from engine.app.bootstrap import Runtime, open_runtime
from engine.app.operations import local_workers, submission, submit
from engine.config.settings import Settings, validate
from engine.errors import EngineError
from engine.nats.rollout_source import JetStreamRolloutSource
from engine.rollouts import train_recorder
from engine.serving import PolicySync, announce_update, wait_for_outcome
from engine.serving.active import active_policies
from engine.training import checkpoint, step_log
from engine.training.checkpoint import CheckpointState
from engine.training.model_package import MODEL_NAME, load_policy
from engine.training.progress import StepBar
from engine.training.rollout_servers import SERVERS, Served, ServingPlan, serving
from engine.training.task import DOMAIN, PLUGIN_PATH, SYSTEM_PROMPT, Problem, problems_for_step
from engine.training.torch_thread import run_torch
from engine.training.trainer import Trainer, TrainOutcome, lora_alpha, with_lora
from events.policy import PolicyActivated
from replay.training import RolloutSubscription, SubscriptionOptions, TrainingBatch, TrainingCursor

DURABLE = "train-demo"
RUN_PREFIX = "demo"
DATA_SOURCE = "train-demo"
BASE_MODEL = "SmolLM2-135M-Instruct"
SERVER_FILE = "server.json"
ADAPTER = f"{MODEL_NAME}-lora"
"""Named in ``policy.updated``: the update is a LoRA adapter (the server merges nothing: it
serves the base model with the adapter)."""
DEFAULT_SERVER = "llamacpp"
"""The faster rollout server in bench/rl_loop.py (docs/training.md has the figures)."""
TORCH_THREADS = 2


class DemoError(EngineError):
    """The demo cannot run as asked (the message says why)."""


class DemoOptions(msgspec.Struct, frozen=True, kw_only=True):
    out: Path
    steps: int = 30
    groups: int = 4
    """Problems (GRPO groups) per step: the groups in flight at once."""
    group_size: int = 4
    """Samples per problem."""
    max_tokens: int = 24
    temperature: float = 1.0
    lr: float = 2e-4
    lora_rank: int = 16
    seed: int = 0
    ack_wait: float = 30.0
    """Seconds before rollouts a killed trainer had fetched are delivered again (held ones get
    heartbeats every quarter of it)."""
    activation_timeout: float = 120.0
    server: str = DEFAULT_SERVER
    """Who serves the rollouts: ``llamacpp`` or ``trainer`` (:mod:`engine.training.rollout_servers`)."""

    def __post_init__(self) -> None:
        if self.server not in SERVERS:
            msg = f"server must be one of {', '.join(SERVERS)}, got {self.server!r}"
            raise DemoError(msg)
        for name in ("steps", "groups", "group_size", "max_tokens", "lora_rank"):
            if getattr(self, name) < 1:
                msg = f"{name} must be at least 1, got {getattr(self, name)}"
                raise DemoError(msg)
        if not self.lr > 0:
            msg = f"lr must be positive, got {self.lr}"
            raise DemoError(msg)


def prepare_out(out: Path) -> Path:
    """Create ``out`` and prove it writable before anything slow starts."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        msg = f"cannot write to --out {out}: {exc.strerror or exc}"
        raise DemoError(msg) from exc
    return out


def demo_settings(settings: Settings, out: Path) -> Settings:
    """The engine's settings for the demo: its own data dir under ``out`` (and so its own
    embedded nats-server and store), never a configured or running engine."""
    raw = msgspec.to_builtins(settings)
    raw["data_dir"] = str(out / "engine")
    raw["nats"] = {**raw.get("nats", {}), "url": None, "store_dir": None}
    raw["plugins"] = [*raw.get("plugins", []), PLUGIN_PATH]
    return validate(raw)


def run_config(options: DemoOptions, base_url: str) -> dict[str, Any]:
    """Every demo run's settings: single-turn, no tools, the demo's domain, its server as the policy."""
    return {
        "models": {"policy": {
            "model": MODEL_NAME, "base_url": base_url, "temperature": options.temperature, "top_p": 1.0,
            "max_tokens": options.max_tokens, "return_token_ids": True, "return_logprobs": True,
            "timeout": 600.0, "max_retries": 2, "system_prompt": SYSTEM_PROMPT,
        }},
        "episode": {"max_steps": 1, "enable_python_code": False, "enable_local_rag": False, "domain": DOMAIN},
    }  # fmt: skip


def group_id(step: int, index: int) -> str:
    return f"{RUN_PREFIX}-s{step:04d}-p{index}"


async def submit_step(runtime: Runtime, step: int, problems: list[Problem], options: DemoOptions,
                      config: dict[str, Any], version: int) -> None:
    """The step's runs; their ids are fixed by step and slot, so a resumed step resubmits nothing new."""
    for index, problem in enumerate(problems):
        group = group_id(step, index)
        for sample in range(options.group_size):
            await submit(runtime.log, submission(
                f"{group}-{sample}", problem.question, ground_truth=problem.answer,
                problem_id=problem.problem_id, data_source=DATA_SOURCE, workflow="reason", config=config,
                group_id=group, sample_index=sample, group_size=options.group_size,
                metadata={"policy_version": version, "train_step": step},
            ))  # fmt: skip


class Demo:
    """The demo's parts, wired; :meth:`run` trains until ``options.steps``."""

    def __init__(self, options: DemoOptions, settings: Settings, *, stream: TextIO | None = None,
                 policy: tuple[Any, Any] | None = None) -> None:
        self.options = options
        self.policy = policy
        """(model, tokenizer) already loaded (the benchmark reuses one load); ``None``: load them."""
        self.out = options.out
        self.checkpoints = options.out / "checkpoints"
        self.settings = demo_settings(settings, options.out)
        self.stream = stream

    async def run(self) -> list[dict[str, Any]]:
        """Train the remaining steps; returns every step's record (earlier runs' included)."""
        finished = checkpoint.read_latest(self.checkpoints)
        if finished is not None and finished.step >= self.options.steps:
            return self._records_of(finished)  # nothing to train: the model is not even loaded
        # deferred: torch is the train extra's
        import torch

        torch.set_num_threads(TORCH_THREADS)
        torch.manual_seed(self.options.seed)
        model, tokenizer = self.policy if self.policy is not None else await run_torch(load_policy)
        model = with_lora(model, self.options.lora_rank)
        trainer = Trainer(model, tokenizer, lr=self.options.lr, group_size=self.options.group_size,
                          temperature=self.options.temperature, max_response_tokens=self.options.max_tokens)
        state = checkpoint.read_latest(self.checkpoints)
        if state is not None:
            await run_torch(checkpoint.restore, self.checkpoints, state, model, trainer.optimizer)
            self._repair_metrics(state)
        done = state.step if state else 0
        version = state.version if state else 0
        plan = ServingPlan(kind=self.options.server, port=self._server_port(),
                           requests=self.options.groups * self.options.group_size, max_tokens=self.options.max_tokens,
                           lora_alpha=lora_alpha(self.options.lora_rank), version=version,
                           served_folder=self.checkpoints / state.folder if state and state.version > 0 else None)
        # The process's registry of served versions may hold another demo's (an earlier call in this
        # process, another data dir): its newer versions would hide this demo's activations.
        active_policies().clear()
        runtime = await open_runtime(self.settings, start_server=True)
        try:
            async with (serving(plan, model, tokenizer) as served, local_workers(runtime, enabled=True)):
                self._remember_port(served.port)
                await self._loop(runtime, served, trainer, state, done, version)
        finally:
            await runtime.close()
        return step_log.read(self.out)

    async def _loop(self, runtime: Runtime, served: Served, trainer: Trainer,
                    state: CheckpointState | None, done: int, version: int) -> None:
        sync = PolicySync(runtime.log, served.loader, endpoint=served.base_url)
        sync_task = asyncio.create_task(sync.run())
        source = await JetStreamRolloutSource.create(runtime.log.js, durable=DURABLE, ack_wait=self.options.ack_wait,
                                                     log=runtime.log)
        sub = RolloutSubscription(source, SubscriptionOptions(
            group_size=self.options.group_size, groups_per_batch=self.options.groups, fetch_timeout=0.5,
            heartbeat_interval=self.options.ack_wait / 4,
        ), cursor=state.cursor if state else TrainingCursor(), policy_version=version,
           on_commit=train_recorder(runtime.log, trainer=DURABLE))  # fmt: skip
        trained = list(state.trained) if state else []
        bar = StepBar(self.options.steps, done=done, stream=self.stream)
        try:
            if state is not None and state.version > 0:  # a kill before the announcement: announce again
                await self._announce(runtime, state, {})
            config = run_config(self.options, served.base_url)
            for step in range(done + 1, self.options.steps + 1):
                record = await self._step(runtime, sub, trainer, step, version, config, trained)
                version = step
                sub.policy_version = version
                bar.advance(record)
        finally:
            bar.close()
            await sub.aclose()
            with contextlib.suppress(Exception):
                await source.close()
            sync.stop()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(sync_task, 10)

    async def _step(self, runtime: Runtime, sub: RolloutSubscription, trainer: Trainer, step: int,
                    version: int, config: dict[str, Any], trained: list[str]) -> dict[str, Any]:
        started, cpu = time.perf_counter(), time.process_time()
        problems = problems_for_step(step, self.options.groups, seed=self.options.seed)
        await submit_step(runtime, step, problems, self.options, config, version)
        batch = await anext(sub)
        rollout_s = time.perf_counter() - started
        stale = batch.staleness_of()
        outcome = await run_torch(trainer.train, batch.trajectories, stale)
        synced = time.perf_counter()
        ids = [t.event_id for t in batch.trajectories]
        trained.extend(ids)
        record = step_record(step, version, batch, outcome, rollout_s)
        state = CheckpointState(step=step, version=step, folder=checkpoint.step_folder(self.checkpoints, step).name,
                                cursor=batch.cursor, trained=trained, record=record)
        await run_torch(checkpoint.save, self.checkpoints, state, trainer.model, trainer.optimizer)
        await batch.commit(step=step)
        await self._announce(runtime, state, {"loss": record["loss"], "reward_mean": record["reward_mean"]})
        record["sync_s"] = round(time.perf_counter() - synced, 3)
        record["cpu_s"] = round(time.process_time() - cpu, 3)
        record["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        step_log.append(self.out, record)
        step_log.plot(self.out, step_log.read(self.out))
        return record

    async def _announce(self, runtime: Runtime, state: CheckpointState, step_metrics: dict[str, float]) -> None:
        """``policy.updated`` for the checkpoint; returns once the server serves it."""
        folder = self.checkpoints / state.folder
        update = await announce_update(runtime.log, version=state.version, checkpoint=str(folder),
                                       base_model=BASE_MODEL, trainer_step=state.step, adapter=ADAPTER,
                                       metrics=step_metrics)
        outcome = await wait_for_outcome(runtime.log, update, timeout=self.options.activation_timeout)
        if not isinstance(outcome, PolicyActivated):
            msg = f"the server did not take version {state.version}: {getattr(outcome, 'reason', outcome)}"
            raise DemoError(msg)
        await _until_stamped(outcome)

    def _records_of(self, state: CheckpointState) -> list[dict[str, Any]]:
        """Every step's record of a finished demo, its metrics line and plot repaired if a kill cut them."""
        self._repair_metrics(state)
        records = step_log.read(self.out)
        if records:
            step_log.plot(self.out, records)
        return records

    def _repair_metrics(self, state: CheckpointState) -> None:
        """A kill between the checkpoint and its metrics line: write the line from the checkpoint."""
        recorded = {r.get("step") for r in step_log.read(self.out)}
        if state.record and state.step not in recorded:
            step_log.append(self.out, {**state.record, "recovered": True})

    def _server_port(self) -> int:
        """The port of the previous run: runs submitted before a kill recorded that URL."""
        try:
            port = int(json.loads((self.out / SERVER_FILE).read_text())["port"])
        except (OSError, ValueError, KeyError, TypeError):
            return 0
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                return 0
        return port

    def _remember_port(self, port: int) -> None:
        (self.out / SERVER_FILE).write_text(json.dumps({"port": port}))


def step_record(step: int, version: int, batch: TrainingBatch, outcome: TrainOutcome,
                rollout_s: float) -> dict[str, Any]:
    """One line of metrics.jsonl (``sync_s`` is filled in after the weights are served)."""
    result = outcome.result
    known = [s for s in batch.staleness_of().values() if s is not None]
    rewards = outcome.rewards
    return {
        "step": step, "policy_version": version, "groups": len(batch.groups), "samples": outcome.samples,
        "reward_mean": round(sum(rewards) / len(rewards), 4) if rewards else 0.0,
        "loss": round(result.loss, 6) if result else 0.0,
        "kl": round(result.kl, 6) if result else 0.0,
        "clip_fraction": round(result.clip_fraction, 6) if result else 0.0,
        "grad_norm": round(result.grad_norm, 4) if result else 0.0,
        "response_tokens": result.tokens if result else 0,
        "staleness_max": max(known) if known else None,
        "rollout_s": round(rollout_s, 3), "tokenize_s": round(outcome.tokenize_s, 3),
        "train_s": round(outcome.train_s, 3), "sync_s": 0.0, "cpu_s": 0.0,
        "skipped": outcome.skipped, "trajectories": [t.event_id for t in batch.trajectories],
    }  # fmt: skip


async def _until_stamped(activated: PolicyActivated, timeout: float = 10.0) -> None:
    """Wait until this process's registry of served versions holds the activated version.

    The policy sync appends the activation, then applies it to the registry after its append
    returns; this demo may read the activation from the log in between, and the next step's
    first calls would then be served by the new adapter yet recorded as unversioned. Best
    effort: after ``timeout`` the step goes on.
    """
    deadline = asyncio.get_running_loop().time() + timeout
    while (active_policies().version_of(activated.policy) or 0) < activated.version:
        if asyncio.get_running_loop().time() >= deadline:
            return
        await asyncio.sleep(0.02)
