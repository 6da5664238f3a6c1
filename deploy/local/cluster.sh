#!/usr/bin/env bash
# A local standalone Flink cluster as separate processes on loopback, from the Flink runtime jars
# on Maven Central (no Flink distribution needed): one JobManager, N TaskManagers, a Prometheus
# reporter on each, Flink's S3 file system as a plugin, and the dumpstream cluster job jar submitted
# over the REST API.
#
#   deploy/local/cluster.sh start [--taskmanagers N] [--slots S] [--tm-memory SIZE] [--rest-port P]
#                                 [--conf KEY=VALUE]... [--owner-pid PID]
#   deploy/local/cluster.sh submit ARGS...        the cluster jar with the same arguments as `ingest`; prints the job id
#   deploy/local/cluster.sh kill-taskmanager      SIGKILL one TaskManager (one that runs tasks, if any)
#   deploy/local/cluster.sh add-taskmanager       start one more TaskManager
#   deploy/local/cluster.sh status                REST URL, plugins, processes, Prometheus ports
#   deploy/local/cluster.sh stop                  stop every process of the cluster (SIGTERM, then SIGKILL)
#
# Ports on 127.0.0.1: REST P (default 8081), JobManager RPC P+1, Prometheus P+2 .. P+11 (each process
# takes the first free one). State (config.yaml, logs, pids) lives in $DUMPSTREAM_CLUSTER_DIR
# (default target/local-cluster in the repository). The jar is $DUMPSTREAM_CLUSTER_JAR (default
# jobs/target/dumpstream-flink-job.jar, built by `mvn -B package -DskipTests`).
#
# Object storage (s3:// and s3a:// for --out and --checkpoints): every process loads the plugins in
# $FLINK_PLUGINS_DIR (default jobs/target/plugins, where the build puts s3-fs-hadoop/ with
# flink-s3-fs-hadoop). `--conf KEY=VALUE` sets any Flink option in the cluster's config.yaml
# (repeatable; it replaces the script's own value; the last one wins), e.g. for an S3 server not AWS:
#   --conf s3.endpoint=http://127.0.0.1:7480 --conf s3.path.style.access=true
# (and --conf s3.signing-algorithm=S3SignerType for Ceph 16, deploy/local/s3.sh). Credentials come from
# the environment of `start`, never from the command line or a file: AWS_ACCESS_KEY_ID and
# AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN if any) are passed on to the JVMs, which the S3 file
# system reads; `add-taskmanager` needs them set as well.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
state="${DUMPSTREAM_CLUSTER_DIR:-$repo/target/local-cluster}"
jar="${DUMPSTREAM_CLUSTER_JAR:-$repo/jobs/target/dumpstream-flink-job.jar}"
conf="$state/conf"
plugins="${FLINK_PLUGINS_DIR:-$repo/jobs/target/plugins}"
# the S3 file system's credentials: inherited by the JVMs from this script's environment
aws_vars=(AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN)
logs="$state/log"
java_bin="${JAVA_HOME:+$JAVA_HOME/bin/}java"

# what Flink's distribution passes to every JVM on Java 17 (its env.java.opts.all)
java_opts=(--add-exports=java.base/sun.net.util=ALL-UNNAMED --add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED
    --add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED
    --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED
    --add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED
    --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED
    --add-opens=java.base/java.text=ALL-UNNAMED --add-opens=java.base/java.time=ALL-UNNAMED
    --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
    --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED
    --add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED)
# and to TaskManagers only (its env.java.opts.taskmanager, also written to the configuration below)
tm_java_opts=(-XX:+UseParallelGC)

die() {
    echo "cluster.sh: $*" >&2
    exit 1
}

alive() {
    [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null
}

rest_url() {
    [[ -f "$state/rest-url" ]] || die "no cluster in $state (run: cluster.sh start)"
    cat "$state/rest-url"
}

# The runtime classpath, resolved by Maven once per pom change (offline first: the jars are usually
# in ~/.m2) and kept beside the pom, in deploy/local/target/, for every state directory.
classpath() {
    local cp="$here/target/classpath.txt"
    mkdir -p "$here/target"
    if [[ ! -s "$cp" || "$here/pom.xml" -nt "$cp" || "$repo/pom.xml" -nt "$cp" ]] || ! jars_exist "$cp"; then
        local args=(-B -q -f "$here/pom.xml" dependency:build-classpath "-Dmdep.outputFile=$cp")
        mvn -o "${args[@]}" >"$logs/maven.log" 2>&1 || mvn "${args[@]}" >>"$logs/maven.log" 2>&1 \
            || { cat "$logs/maven.log" >&2; die "could not resolve the Flink runtime through Maven (log above)"; }
    fi
    cat "$cp"
}

jars_exist() {
    local IFS=:
    for f in $(cat "$1"); do
        [[ -f "$f" ]] || return 1
    done
}

# The memory flags Flink computes from config.yaml (what its taskmanager.sh / jobmanager.sh do):
# line 1 JVM flags, line 2 dynamic properties for the process.
resource_params() {
    local cache="$state/$1.params"
    if [[ -s "$cache" && "$cache" -nt "$conf/config.yaml" ]]; then
        cat "$cache"
        return
    fi
    local out
    out="$("$java_bin" -cp "$cp" org.apache.flink.runtime.util.bash.BashJavaUtils "$1" --configDir "$conf" 2>&1)" \
        || { echo "$out" >&2; die "BashJavaUtils $1 failed for $conf/config.yaml"; }
    grep '^BASH_JAVA_UTILS_EXEC_RESULT:' <<<"$out" | sed 's/^BASH_JAVA_UTILS_EXEC_RESULT://' >"$cache"
    cat "$cache"
}

write_config() {
    local rest_port=$1 slots=$2 tm_memory=$3
    shift 3
    mkdir -p "$conf" "$logs" "$state/tmp" "$state/upload"
    # --conf KEY=VALUE: the last value of each key, in place of a line below (config.yaml allows no
    # duplicate keys)
    local -A given=()
    local order=() kv key
    for kv in "$@"; do
        key=${kv%%=*}
        [[ -n "${given[$key]+set}" ]] || order+=("$key")
        given[$key]=${kv#*=}
    done
    local base
    base="$(cat <<EOF
# written by deploy/local/cluster.sh start; every process of the cluster reads it
jobmanager.rpc.address: 127.0.0.1
jobmanager.bind-host: 127.0.0.1
jobmanager.rpc.port: $((rest_port + 1))
jobmanager.memory.process.size: 800m
rest.address: 127.0.0.1
rest.bind-address: 127.0.0.1
rest.port: $rest_port
web.upload.dir: $state/upload
taskmanager.host: 127.0.0.1
taskmanager.bind-host: 127.0.0.1
taskmanager.numberOfTaskSlots: $slots
taskmanager.memory.process.size: $tm_memory
# the job keeps its state on the heap (hashmap backend): no managed memory to reserve
taskmanager.memory.managed.size: 0m
# spread a job's slots over the TaskManagers, so losing one loses part of every job
taskmanager.load-balance.mode: slots
io.tmp.dirs: $state/tmp
# a TaskManager started with the JobManager registers at once, and a lost one is noticed in seconds
cluster.registration.error-delay: 1000ms
heartbeat.interval: 2000
heartbeat.timeout: 15000
heartbeat.rpc-failure-threshold: 2
metrics.reporter.prom.factory.class: org.apache.flink.metrics.prometheus.PrometheusReporterFactory
metrics.reporter.prom.port: $((rest_port + 2))-$((rest_port + 11))
env.java.opts.all: ${java_opts[*]}
# short-lived multi-MiB payload arrays: the parallel collector costs the job far less CPU than G1
# (BENCHMARKS.md, "Ingest end to end")
env.java.opts.taskmanager: ${tm_java_opts[*]}
EOF
)"
    local line
    while IFS= read -r line; do
        key=${line%%:*}
        [[ "$line" != \#* && -n "${given[$key]+set}" ]] || printf '%s\n' "$line"
    done <<<"$base" >"$conf/config.yaml"
    if [[ ${#order[@]} -gt 0 ]]; then
        echo "# given with --conf" >>"$conf/config.yaml"
        for key in "${order[@]}"; do
            yaml_line "$key" "${given[$key]}" >>"$conf/config.yaml"
        done
    fi
    write_log4j "$conf/log4j.properties"
}

# write_log4j FILE: each Flink process logs to its own file (-Dlog.file), Kafka's clients at WARN
write_log4j() {
    cat >"$1" <<'EOF'
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
appender.file.type = File
appender.file.name = file
appender.file.fileName = ${sys:log.file}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{HH:mm:ss,SSS} %-5p %c{1} - %m%n
logger.kafka.name = org.apache.kafka
logger.kafka.level = WARN
EOF
}

# KEY: "VALUE" with the value as a YAML double-quoted string (Flink converts it to the option's type)
yaml_line() {
    local v=${2//\\/\\\\}
    v=${v//\"/\\\"}
    printf '%s: "%s"\n' "$1" "$v"
}

# checks a --conf KEY=VALUE; dies naming it when it cannot be a config.yaml line or carries a credential
check_conf() {
    local kv=$1 key value
    [[ "$kv" == *=* ]] || die "start: --conf takes KEY=VALUE, got '$kv'"
    key=${kv%%=*}
    value=${kv#*=}
    [[ "$key" =~ ^[A-Za-z0-9][A-Za-z0-9_.-]*$ ]] || die "start: --conf key must be a Flink option name such as s3.endpoint, got '$key'"
    [[ -n "$value" ]] || die "start: --conf $key needs a value"
    [[ "$value" != *$'\n'* && "$value" != *$'\r'* ]] || die "start: --conf $key: the value has a line break"
    local lower=${key,,}
    case "$lower" in
        *access-key* | *access.key* | *secret* | *password*)
            # the value would sit in config.yaml, the shell's history and every `ps` listing
            die "start: --conf $key: credentials come from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), not the command line" ;;
    esac
}

# start_process NAME MAINCLASS RESOURCE_COMMAND [EXTRA ARGS...]: a detached JVM; its pid in $state/NAME.pid
start_process() {
    local name=$1 main=$2 resources=$3
    shift 3
    local role_opts=()
    [ "$resources" = GET_TM_RESOURCE_PARAMS ] && role_opts=("${tm_java_opts[@]}")
    local params jvm dyn
    params="$(resource_params "$resources")"
    jvm="$(sed -n 1p <<<"$params")"
    dyn="$(sed -n 2p <<<"$params")"
    # shellcheck disable=SC2086 # flag lists from BashJavaUtils are meant to split
    FLINK_PLUGINS_DIR="$plugins" setsid nohup "$java_bin" $jvm "${java_opts[@]}" "${role_opts[@]}" -Dlog.file="$logs/$name.log" \
        -Dlog4j.configurationFile="$conf/log4j.properties" -cp "$cp" "$main" --configDir "$conf" $dyn "$@" \
        >"$logs/$name.out" 2>&1 </dev/null &
    echo $! >"$state/$name.pid"
}

start_taskmanager() {
    local id=$1
    start_process "$id" org.apache.flink.runtime.taskexecutor.TaskManagerRunner GET_TM_RESOURCE_PARAMS \
        -D "taskmanager.resource-id=$id"
}

registered_taskmanagers() {
    curl -sf --max-time 5 "$(rest_url)/taskmanagers" 2>/dev/null | jq -r '.taskmanagers | length' 2>/dev/null || echo 0
}

# waits until the REST endpoint answers with N TaskManagers registered; fails naming a process that died
await_taskmanagers() {
    local want=$1 deadline=$((SECONDS + ${DUMPSTREAM_CLUSTER_START_TIMEOUT:-180}))
    while true; do
        local n
        n="$(registered_taskmanagers)"
        [[ "$n" -ge "$want" ]] && return 0
        for pidfile in "$state"/*.pid; do
            [[ "$pidfile" == "$state/watchdog.pid" ]] && continue
            if ! alive "$pidfile"; then
                local name
                name="$(basename "$pidfile" .pid)"
                tail -n 30 "$logs/$name.out" "$logs/$name.log" >&2 2>/dev/null || true
                die "$name exited during start (logs in $logs)"
            fi
        done
        ((SECONDS < deadline)) || die "timed out: $n of $want TaskManagers registered at $(rest_url) (logs in $logs)"
        sleep 0.5
    done
}

cmd_start() {
    local tms=2 slots=2 tm_memory=1024m rest_port=8081 owner="" extra=()
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --taskmanagers) tms=${2:?--taskmanagers needs a number}; shift 2 ;;
            --slots) slots=${2:?--slots needs a number}; shift 2 ;;
            --tm-memory) tm_memory=${2:?--tm-memory needs a size such as 1024m}; shift 2 ;;
            --rest-port) rest_port=${2:?--rest-port needs a port}; shift 2 ;;
            --owner-pid) owner=${2:?--owner-pid needs a pid}; shift 2 ;;
            --conf) check_conf "${2:?--conf needs KEY=VALUE}"; extra+=("$2"); shift 2 ;;
            *) die "start: unknown option '$1' (options: --taskmanagers N --slots S --tm-memory SIZE --rest-port P --conf KEY=VALUE --owner-pid PID)" ;;
        esac
    done
    [[ "$tms" =~ ^[1-9][0-9]?$ ]] || die "start: --taskmanagers must be 1..99, got '$tms'"
    [[ "$slots" =~ ^[1-9][0-9]?$ ]] || die "start: --slots must be 1..99, got '$slots'"
    [[ "$rest_port" =~ ^[0-9]+$ && "$rest_port" -ge 1024 && "$rest_port" -le 65000 ]] \
        || die "start: --rest-port must be 1024..65000, got '$rest_port'"
    [[ "$tm_memory" =~ ^[0-9]+[mMgG]$ ]] || die "start: --tm-memory must be a size such as 1024m or 2g, got '$tm_memory'"
    if alive "$state/jobmanager.pid"; then
        die "a cluster is already running from $state at $(rest_url) (cluster.sh stop first)"
    fi
    command -v jq >/dev/null || die "jq is needed (apt-get install jq)"
    command -v curl >/dev/null || die "curl is needed (apt-get install curl)"
    [[ "$plugins" == /* ]] || die "start: FLINK_PLUGINS_DIR must be an absolute path, got '$plugins'"
    compgen -G "$plugins/*/*.jar" >/dev/null \
        || die "start: no Flink plugins in $plugins (build them: mvn -B package -DskipTests, or set FLINK_PLUGINS_DIR)"
    if [[ -n "${AWS_ACCESS_KEY_ID:-}" && -z "${AWS_SECRET_ACCESS_KEY:-}" ]]; then
        die "start: AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not (set both or neither)"
    elif [[ -z "${AWS_ACCESS_KEY_ID:-}" && -n "${AWS_SECRET_ACCESS_KEY:-}" ]]; then
        die "start: AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not (set both or neither)"
    fi
    rm -f "$state"/*.pid "$state"/*.params "$state/rest-url" "$state/taskmanagers" "$state/aws-env"
    mkdir -p "$logs"
    rm -f "$logs"/*.log "$logs"/*.out
    write_config "$rest_port" "$slots" "$tm_memory" ${extra[@]+"${extra[@]}"}
    echo "$plugins" >"$state/plugins"
    # the names (never the values) of the credential variables the processes got, for add-taskmanager
    local name
    for name in "${aws_vars[@]}"; do
        [[ -z "${!name:-}" ]] || echo "$name"
    done >"$state/aws-env"
    echo "http://127.0.0.1:$rest_port" >"$state/rest-url"
    cp="$(classpath)"
    trap 'rc=$?; if [[ $rc -ne 0 ]]; then echo "cluster.sh: start failed, stopping what was started" >&2; cmd_stop >&2; fi' EXIT
    start_process jobmanager org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint \
        GET_JM_RESOURCE_PARAMS
    if [[ -n "$owner" ]]; then
        # stops the cluster when the process that started it is gone (a test runner that crashed);
        # ends by itself when the cluster was stopped (no jobmanager.pid)
        setsid nohup bash -c 'while kill -0 "$1" 2>/dev/null && [[ -f "$2/jobmanager.pid" ]]; do sleep 1; done
            [[ -f "$2/jobmanager.pid" ]] && "$3" stop' \
            watchdog "$owner" "$state" "$here/cluster.sh" >"$logs/watchdog.out" 2>&1 </dev/null &
        echo $! >"$state/watchdog.pid"
    fi
    for i in $(seq 1 "$tms"); do
        start_taskmanager "tm-$i"
    done
    echo "$tms" >"$state/taskmanagers"
    await_taskmanagers "$tms"
    trap - EXIT
    rest_url
}

cmd_submit() {
    [[ $# -gt 0 ]] || die "submit: give the job's arguments, the same as for ingest (--bootstrap ... --out ... --checkpoints ...)"
    [[ -f "$jar" ]] || die "submit: no cluster jar at $jar (build it: mvn -B package -DskipTests)"
    local url upload jar_id body run job
    url="$(rest_url)"
    upload="$(curl -sS --max-time 300 -X POST -H 'Expect:' -F "jarfile=@$jar" "$url/jars/upload")" \
        || die "submit: uploading $jar to $url failed"
    jar_id="$(jq -r '.filename // empty' <<<"$upload" | xargs -r basename)"
    [[ -n "$jar_id" ]] || die "submit: $url/jars/upload answered: $upload"
    # one --arg per argument, so that any argument (spaces, quotes, newlines) arrives as it was given
    local list='[]'
    for a in "$@"; do
        list="$(jq -c --arg a "$a" '. + [$a]' <<<"$list")"
    done
    body="$(jq -c --arg main io.dumpstream.job.IngestJob '{entryClass: $main, programArgsList: .}' <<<"$list")"
    run="$(curl -sS --max-time 600 -X POST -H 'Content-Type: application/json' -d "$body" "$url/jars/$jar_id/run")" \
        || die "submit: running $jar_id on $url failed"
    job="$(jq -r '.jobid // empty' <<<"$run" 2>/dev/null || true)"
    if [[ -z "$job" ]]; then
        echo "cluster.sh: the cluster refused the job:" >&2
        jq -r '.errors[]?' <<<"$run" >&2 2>/dev/null || echo "$run" >&2
        exit 1
    fi
    echo "$job" >>"$state/jobs"
    echo "$job"
}

cmd_kill_taskmanager() {
    local url victim="" pid
    url="$(rest_url)"
    # prefer a TaskManager that runs tasks: losing an idle one tests nothing
    victim="$(curl -sf --max-time 10 "$url/taskmanagers" \
        | jq -r '[.taskmanagers[] | select(.freeSlots < .slotsNumber) | .id] | sort | first // empty' 2>/dev/null || true)"
    if [[ -z "$victim" ]] || ! alive "$state/$victim.pid"; then
        victim=""
        for pidfile in "$state"/tm-*.pid; do
            if alive "$pidfile"; then
                victim="$(basename "$pidfile" .pid)"
                break
            fi
        done
    fi
    [[ -n "$victim" ]] || die "kill-taskmanager: no TaskManager is running"
    pid="$(cat "$state/$victim.pid")"
    kill -KILL "$pid"
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
    rm -f "$state/$victim.pid"
    echo "killed $victim (pid $pid)"
}

cmd_add_taskmanager() {
    rest_url >/dev/null
    local n
    n=$(($(cat "$state/taskmanagers") + 1))
    plugins="$(cat "$state/plugins")"
    local name
    while read -r name; do
        [[ -n "${!name:-}" ]] || die "add-taskmanager: the cluster was started with $name set; set it here too (the new TaskManager reads S3 credentials from its environment)"
    done <"$state/aws-env"
    cp="$(classpath)"
    start_taskmanager "tm-$n"
    echo "$n" >"$state/taskmanagers"
    echo "started tm-$n"
}

cmd_status() {
    echo "REST $(rest_url)"
    local p
    p="$(cat "$state/plugins" 2>/dev/null || true)"
    [[ -z "$p" ]] || echo "plugins $p: $(cd "$p" 2>/dev/null && ls -d -- */ 2>/dev/null | tr -d / | tr '\n' ' ')"
    for pidfile in "$state"/*.pid; do
        [[ -f "$pidfile" ]] || continue
        local name
        name="$(basename "$pidfile" .pid)"
        if alive "$pidfile"; then echo "$name pid $(cat "$pidfile") running"; else echo "$name pid $(cat "$pidfile") gone"; fi
    done
    grep -ho 'Started PrometheusReporter HTTP server on port [0-9]*' "$logs"/*.log 2>/dev/null || true
}

cmd_stop() {
    local pids=() pidfile
    for pidfile in "$state"/jobmanager.pid "$state"/tm-*.pid; do
        alive "$pidfile" && pids+=("$(cat "$pidfile")")
    done
    if [[ ${#pids[@]} -gt 0 ]]; then
        kill -TERM "${pids[@]}" 2>/dev/null || true
        local deadline=$((SECONDS + 30))
        for pid in "${pids[@]}"; do
            while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
            kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
        done
    fi
    rm -f "$state"/jobmanager.pid "$state"/tm-*.pid
    # the watchdog ends by itself once the pid files are gone; stop it unless this is it
    # (the watchdog's bash execs this script as its last command: then the watchdog is $$)
    local watchdog
    watchdog="$(cat "$state/watchdog.pid" 2>/dev/null || true)"
    if alive "$state/watchdog.pid" && [[ "$watchdog" != "$$" && "$watchdog" != "$PPID" ]]; then
        kill -TERM "$watchdog" 2>/dev/null || true
    fi
    rm -f "$state/watchdog.pid"
    echo "stopped ${#pids[@]} processes"
}

# sourced (deploy/local/hosts.sh): the functions and settings above, no command
[[ "${BASH_SOURCE[0]}" == "$0" ]] || return 0

case "${1:-}" in
    start) shift; cmd_start "$@" ;;
    submit) shift; cmd_submit "$@" ;;
    kill-taskmanager) shift; cmd_kill_taskmanager ;;
    add-taskmanager) shift; cmd_add_taskmanager ;;
    status) shift; cmd_status ;;
    stop) shift; cmd_stop ;;
    *) sed -n '2,28p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
