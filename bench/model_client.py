"""Model client benchmark: the engine's OpenAI-compatible client vs the SDK's default path.

A worker spends more CPU on model calls than on anything else, so the client's cost per
call bounds how many episodes one worker process can drive. Both sides call the same
fake model server (its own process, so its CPU is not counted) with the same request:

- baseline: ``AsyncOpenAI().chat.completions.with_raw_response.create`` with the SDK's
  default HTTP pool (what the engine used before);
- engine: :class:`engine.models.openai_compat.OpenAICompatClient` (the SDK's aiohttp
  transport and its raw ``post``), including its retry and decoding layer.

Printed: calls/s and client CPU per call at each concurrency, and the engine/baseline
ratios (CPU ratio below 1 is cheaper).

    .venv/bin/python bench/model_client.py [--calls 1500] [--quick] [--latency-ms 0]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import openai

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.episode import model_process
from engine.app.log_setup import configure_logging
from engine.models.openai_compat import ModelEndpoint, OpenAICompatClient
from events.model import ChatMessage, SamplingParams

PROMPT = "Solve the problem, using python where it helps. What is 6 times 7? " * 10
PARAMS = SamplingParams(temperature=1.0, top_p=1.0, max_tokens=256)


async def measure(call: Callable[[], Awaitable[object]], calls: int, concurrency: int) -> tuple[float, float]:
    """(calls per second, CPU ms per call) for ``calls`` calls, ``concurrency`` at a time."""
    gate = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with gate:
            await call()

    await asyncio.gather(*(one() for _ in range(2 * concurrency)))  # connections opened first
    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one() for _ in range(calls)))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    return calls / elapsed, cpu / calls * 1000


async def sdk_default(url: str, calls: int, concurrency: int) -> tuple[float, float]:
    sdk = openai.AsyncOpenAI(base_url=url, api_key="EMPTY", max_retries=0)
    request = {
        "model": "fake",
        "messages": [{"role": "user", "content": PROMPT}],
        "temperature": PARAMS.temperature,
        "top_p": PARAMS.top_p,
        "max_tokens": PARAMS.max_tokens,
        "n": 1,
    }

    async def call() -> bytes:
        raw = await sdk.chat.completions.with_raw_response.create(**request)
        return raw.content

    try:
        return await measure(call, calls, concurrency)
    finally:
        await sdk.close()


async def engine_client(url: str, calls: int, concurrency: int) -> tuple[float, float]:
    client = OpenAICompatClient(ModelEndpoint(base_url=url, model="fake", max_concurrency=256))
    messages = [ChatMessage(role="user", content=PROMPT)]
    try:
        return await measure(lambda: client.complete(messages, PARAMS), calls, concurrency)
    finally:
        await client.close()


async def main(calls: int, latency_ms: int, concurrencies: list[int]) -> None:
    configure_logging(level="error")
    print(f"fake model in its own process, {latency_ms} ms per call; client CPU counted", flush=True)
    with model_process(latency_ms) as url:
        for concurrency in concurrencies:
            count = calls if concurrency > 1 else max(100, calls // 5)
            base_rate, base_cpu = await sdk_default(url, count, concurrency)
            rate, cpu = await engine_client(url, count, concurrency)
            print(
                f"concurrency {concurrency:>3}: SDK default {base_rate:7.1f} calls/s ({base_cpu:4.2f} ms CPU/call)"
                f"   engine client {rate:7.1f} calls/s ({cpu:4.2f} ms CPU/call)"
                f"   CPU ratio {cpu / base_cpu:4.2f}x  rate ratio {rate / base_rate:4.2f}x",
                flush=True,
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1500)
    parser.add_argument("--quick", action="store_true", help="fewer calls")
    parser.add_argument("--latency-ms", type=int, default=0, help="the fake model's latency per call")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 32, 128])
    args = parser.parse_args()
    asyncio.run(main(300 if args.quick else args.calls, args.latency_ms, args.concurrency))
