#!/usr/bin/env bash
# Serve several models, each on its own port and GPUs (e.g. the policy and the verifier
# of the evolve workflow, or the K branches' models), from a table:
#
#   deploy/vllm/serve-many.sh deploy/vllm/models.example.tsv [--dry-run]
#
# Each non-comment line: NAME  MODEL  PORT  GPUS  [EXTRA SERVE.SH OPTIONS...]
# All servers stop together on Ctrl-C / SIGTERM; the script prints the apollo `models:`
# section that points each role at its server.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
table="${1:-}"; dry_run=""
[[ -n "$table" && -f "$table" ]] || { echo "usage: serve-many.sh TABLE.tsv [--dry-run]" >&2; exit 2; }
[[ "${2:-}" == "--dry-run" ]] && dry_run="--dry-run"

pids=()
stop_all() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait || true; }
trap stop_all INT TERM EXIT

echo "# apollo config (models section):"
echo "models:"
seen_ports=" "
while read -r name model port gpus rest; do
  [[ -z "${name:-}" || "$name" == \#* ]] && continue
  [[ -n "${gpus:-}" ]] || { echo "serve-many.sh: line for '$name' needs NAME MODEL PORT GPUS" >&2; exit 2; }
  [[ "$seen_ports" != *" $port "* ]] || { echo "serve-many.sh: port $port used twice" >&2; exit 2; }
  seen_ports+="$port "
  echo "  # $name: $model on GPU(s) $gpus"
  echo "  $name: {model: $name, base_url: \"http://127.0.0.1:$port/v1\"}"
  # shellcheck disable=SC2086 # the table's extra options are meant to split
  "$here/serve.sh" "$model" --name "$name" --port "$port" --gpus "$gpus" $rest $dry_run &
  pids+=($!)
done < "$table"

(( ${#pids[@]} > 0 )) || { echo "serve-many.sh: no models in $table" >&2; exit 2; }
if [[ -n "$dry_run" ]]; then wait; trap - EXIT; exit 0; fi
wait -n "${pids[@]}"   # one server died: stop the others (the trap does it)
