"""Benchmark the local_rag retrieval: recall@5 (BM25 alone vs fused) and query latency.

Usage: .venv/bin/python bench/rag.py [--data-dir DIR] [--rebuild] [--queries FILE]

A query counts as answered when any of its top-5 hits has a qualified name or
public alias in the query's list of acceptable names. Latency is measured on the
fused path (query embedding + BM25 + fusion) against a 1 s model call, the cost
a retrieval step is weighed against inside an agent turn.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from engine.rag.kb import KnowledgeBase
from engine.rag.libraries import SUPPORTED_LIBRARIES

MODEL_CALL_S = 1.0
K = 5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument(
        "--queries", type=Path, default=Path(__file__).with_name("rag_queries.jsonl")
    )
    parser.add_argument("--repeat", type=int, default=5, help="latency passes over the set")
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args()

    queries = [json.loads(line) for line in args.queries.read_text().splitlines() if line.strip()]
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="apollo-rag-bench-"))
    kb = KnowledgeBase(data_dir)
    started = time.monotonic()
    for library in SUPPORTED_LIBRARIES:
        kb.index(library, rebuild=args.rebuild)
    print(f"knowledge base ready in {time.monotonic() - started:.1f}s at {data_dir}")
    print(f"retrieval: {kb.status()['retrieval']}; queries: {len(queries)}")

    for mode in ("bm25", "fused"):
        found, misses = 0, []
        for q in queries:
            hits = kb.search(q["library"], q["query"], K, mode)
            names = {n for h in hits for n in (h.entry.name, *h.entry.aliases)}
            if names & set(q["expected"]):
                found += 1
            else:
                misses.append((q["query"], [h.entry.name for h in hits]))
        print(f"recall@{K} {mode:5s}: {found / len(queries):.3f} ({found}/{len(queries)})")
        if args.show_misses:
            for query, got in misses:
                print(f"   miss: {query!r} -> {got}")

    latencies = []
    for _ in range(args.repeat):
        for q in queries:
            t0 = time.perf_counter()
            kb.search(q["library"], q["query"], K, "fused")
            latencies.append(time.perf_counter() - t0)
    p50, p99 = (float(np.percentile(latencies, p)) for p in (50, 99))
    print(f"fused query latency: p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms")
    print(f"p50 / {MODEL_CALL_S:.0f} s model call = {p50 / MODEL_CALL_S:.3%} (target < 5%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
