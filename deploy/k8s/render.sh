#!/usr/bin/env bash
# Prints deploy/k8s/flinkdeployment.yaml with its ${NAME} parameters filled in: the defaults in
# params.env, overridden by NAME=VALUE arguments.
#   deploy/k8s/render.sh PARALLELISM=8 TM_MEMORY=8192m BUCKET=s3a://my-bucket/dumpstream | kubectl apply -f -
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
declare -A p
while IFS='=' read -r k v; do
    [[ -z "$k" || "$k" == \#* ]] && continue
    p[$k]=$v
done <"$here/params.env"
for arg in "$@"; do
    [[ "$arg" == *=* ]] || { echo "render.sh: arguments are NAME=VALUE, got '$arg'" >&2; exit 2; }
    k=${arg%%=*}
    [[ -n "${p[$k]+set}" ]] || { echo "render.sh: unknown parameter '$k' (known: ${!p[*]})" >&2; exit 2; }
    p[$k]=${arg#*=}
done
check() {
    [[ "${p[$1]}" =~ $2 ]] || { echo "render.sh: $1 must be $3, got '${p[$1]}'" >&2; exit 2; }
}
check PARALLELISM '^[1-9][0-9]*$' 'a positive integer'
check TASK_SLOTS '^[1-9][0-9]*$' 'a positive integer'
check TM_MEMORY '^[1-9][0-9]*[mg]$' 'a size such as 4096m or 4g'
check JM_MEMORY '^[1-9][0-9]*[mg]$' 'a size such as 2048m or 2g'
check TM_CPU '^[0-9]+(\.[0-9]+)?$' 'a number of cores'
check JM_CPU '^[0-9]+(\.[0-9]+)?$' 'a number of cores'
check CHECKPOINT_INTERVAL '^[1-9][0-9]*(ms|s|m|h)$' 'a duration such as 30s or 2m'
check BUCKET '^s3a://[^ ]+[^/]$' 'an s3a:// URI without a trailing /'
check NAME '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' 'a Kubernetes name (lowercase letters, digits, -)'
text="$(cat "$here/flinkdeployment.yaml")"
for k in "${!p[@]}"; do
    text=${text//"\${$k}"/${p[$k]}}
done
if grep -o '\${[A-Za-z_]*}' <<<"$text" | head -1 | grep -q .; then
    echo "render.sh: unfilled parameter $(grep -o '\${[A-Za-z_]*}' <<<"$text" | head -1)" >&2
    exit 2
fi
printf '%s\n' "$text"
