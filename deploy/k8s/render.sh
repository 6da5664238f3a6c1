#!/usr/bin/env bash
# Prints deploy/k8s/flinkdeployment.yaml with its ${NAME} parameters filled in: the defaults in
# params.env, overridden by NAME=VALUE arguments. A bad value stops it with one line naming the parameter.
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
check S3_PATH_STYLE '^(true|false)$' 'true or false'
check NAME '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' 'a Kubernetes name (lowercase letters, digits, -)'
check NAMESPACE '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$' 'a Kubernetes namespace (lowercase letters, digits, -; at most 63)'
check IMAGE '^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-]+[a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9._-]{0,127})?(@sha256:[0-9a-f]{64})?$' \
    'an image reference such as registry.example.com:5000/dumpstream-flink-job:0.1.0'
check S3_ENDPOINT '^https?://[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?(:[0-9]{1,5})?$' \
    'an http:// or https:// URL of a host (and port), such as https://s3.amazonaws.com or http://10.0.0.5:7480'
check TOPIC '^[A-Za-z0-9._-]{1,249}$' 'a Kafka topic name (letters, digits, ., _, -; at most 249)'
if [[ "${p[TOPIC]}" == . || "${p[TOPIC]}" == .. ]]; then
    echo "render.sh: TOPIC must be a Kafka topic name other than '.' or '..', got '${p[TOPIC]}'" >&2
    exit 2
fi

# One pass over the template, each ${NAME} replaced by its value as it is: no pattern substitution (in
# bash 5.2 an & in its replacement stands for the match), and a value is never scanned again, so a value
# holding & \ / or ${...} lands unchanged. ${env:...} is left for the job to resolve.
template="$(cat "$here/flinkdeployment.yaml")"
text=''
while [[ "$template" == *'${'* ]]; do
    text+=${template%%'${'*}
    template=${template#*'${'}
    name=${template%%'}'*}
    if [[ "$template" == *'}'* && "$name" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]]; then
        [[ -n "${p[$name]+set}" ]] || { echo "render.sh: unfilled parameter \${$name}" >&2; exit 2; }
        text+=${p[$name]}
        template=${template#*'}'}
    else
        text+='${'
    fi
done
text+=$template
printf '%s\n' "$text"
