#!/usr/bin/env bash
# Serve one model with vLLM's OpenAI-compatible server, the way apollo expects it.
#
# Replaces the reference's Ray Serve helper: one process, data parallel over the given
# GPUs (one engine replica per GPU, like its one replica per GPU with TP 1), or tensor
# parallel with --tp. Reasoning goes to `reasoning_content` (apollo folds it back into
# <think>...</think>) and token ids can be returned for training.
#
#   deploy/vllm/serve.sh MODEL [--name default-model] [--port 8000] [--gpus 0,1]
#                        [--tp 1] [--context-len 32768] [--reasoning-parser deepseek_r1]
#                        [--gpu-memory 0.9] [--host 0.0.0.0] [--dry-run] [-- EXTRA VLLM ARGS]
#
# Then: APOLLO_MODEL_URL=http://HOST:PORT/v1 APOLLO_MODEL=NAME apollo ...
# (and `models.policy.return_token_ids: true` in the config to record token ids).
set -euo pipefail

usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }

[[ $# -ge 1 ]] || usage
case "$1" in -h|--help) usage 0 ;; esac
[[ "$1" != -* ]] || { echo "serve.sh: the first argument is the model (path or hub id), got '$1'" >&2; exit 2; }
model="$1"; shift
name="default-model"; port=8000; gpus=""; tp=1; context_len=32768
reasoning_parser="deepseek_r1"; gpu_memory=0.9; host="0.0.0.0"; dry_run=0; extra=()

while [[ $# -gt 0 ]]; do
  case "$1" in
    --name) name="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --gpus) gpus="$2"; shift 2 ;;
    --tp) tp="$2"; shift 2 ;;
    --context-len) context_len="$2"; shift 2 ;;
    --reasoning-parser) reasoning_parser="$2"; shift 2 ;;
    --gpu-memory) gpu_memory="$2"; shift 2 ;;
    --host) host="$2"; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) usage 0 ;;
    *) echo "serve.sh: unknown option $1" >&2; usage ;;
  esac
done

[[ "$port" =~ ^[0-9]+$ ]] || { echo "serve.sh: --port must be a number, got '$port'" >&2; exit 2; }
[[ "$tp" =~ ^[1-9][0-9]*$ ]] || { echo "serve.sh: --tp must be a positive number, got '$tp'" >&2; exit 2; }

n_gpus=1
if [[ -n "$gpus" ]]; then
  [[ "$gpus" =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "serve.sh: --gpus wants a list like 0,1 (got '$gpus')" >&2; exit 2; }
  export CUDA_VISIBLE_DEVICES="$gpus"
  n_gpus=$(( $(tr -cd ',' <<<"$gpus" | wc -c) + 1 ))
fi
(( n_gpus % tp == 0 )) || { echo "serve.sh: $n_gpus GPU(s) cannot be split into groups of --tp $tp" >&2; exit 2; }
dp=$(( n_gpus / tp ))

cmd=(vllm serve "$model"
  --served-model-name "$name"
  --host "$host" --port "$port"
  --max-model-len "$context_len"
  --gpu-memory-utilization "$gpu_memory"
  --tensor-parallel-size "$tp"
  --data-parallel-size "$dp"
  --reasoning-parser "$reasoning_parser"
  --return-tokens-as-token-ids
  --enable-prefix-caching
  "${extra[@]}")

if (( dry_run )); then
  echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-} ${cmd[*]}"
  exit 0
fi
command -v vllm >/dev/null || { echo "serve.sh: vllm is not installed (pip install vllm on a GPU host)" >&2; exit 1; }
exec "${cmd[@]}"
