#!/usr/bin/env bash
# Test hosts on this machine: one Linux network namespace per host, each with its own address on a
# bridge, running the job's whole system as a cluster of hosts would (root only: ip netns, iptables).
#
#   deploy/local/hosts.sh up [--brokers N] [--topic T] [--partitions P] [--owner-pid PID]
#                                   remove what a previous run left (namespaces, processes), make the
#                                   network and the hosts, start every process, create the bucket and
#                                   the topic; prints the settings (also in DIR/hosts.env)
#   deploy/local/hosts.sh down      SIGKILL every process of every host, delete the namespaces and the bridge
#   deploy/local/hosts.sh status    hosts, addresses, links, processes; the leading JobManager
#   deploy/local/hosts.sh exec HOST CMD...   run CMD on HOST (in its namespace)
#   deploy/local/hosts.sh kill HOST          SIGKILL every process on HOST (the host is lost)
#   deploy/local/hosts.sh start HOST         start HOST's processes again (the host returns)
#   deploy/local/hosts.sh link-down HOST | link-up HOST
#                                   pull / plug HOST's cable (the bridge's end of its veth pair)
#   deploy/local/hosts.sh cut HOST [--from HOST2[,HOST3...]]
#                                   drop every packet between HOST and HOST2 (default: every other host
#                                   and this machine) in HOST's namespace, silently (iptables DROP);
#                                   --from kafka means every broker host
#   deploy/local/hosts.sh heal HOST          undo cut and link-down on HOST
#   deploy/local/hosts.sh ranks start [--rate DUMPS_PER_S] [--run-id ID] | ranks stop
#                                   synthetic ranks on the rank host writing dumps into the agent's spool
#                                   (simulate --out) at a steady rate / stop them (SIGTERM)
#   deploy/local/hosts.sh submit ARGS...     the cluster jar on the leading JobManager (as cluster.sh submit)
#   deploy/local/hosts.sh leader [--host]    the REST URL of the leading JobManager (--host: its host, jm1 or jm2)
#
# The hosts (address NET.x): zk .2 (ZooKeeper from Debian's package, a plain JVM), s3 .3 (Ceph's RADOS
# Gateway, deploy/local/s3.sh, port 7480), jm1 .4 and jm2 .5 (Flink JobManagers, high availability on
# ZooKeeper: one leads, one stands by; REST 8081), tm1 .6, tm2 .7, tm3 .8 (TaskManagers, 2 slots each),
# rank .9 (`dumpstream agent` publishing the spool DIR/hosts/rank/spool: acks=all, idempotence), kafka1 ..
# kafkaN .11.. (Kafka KRaft nodes, broker and controller each, port 9092; N = --brokers, default 1;
# with 3 or more: replication factor 3 and min.insync.replicas 2). This machine reaches every host
# through the bridge (NET.1). Output and checkpoints belong on S3 (s3://dumpstream/...); the JobManagers'
# HA metadata is in s3://dumpstream/ha.
#
# Every process has its own folder DIR/hosts/HOST/ (working directory, data, logs); nothing passes
# between hosts through a local path. DIR: $DUMPSTREAM_HOSTS_DIR (default target/local-hosts).
# NET: $DUMPSTREAM_HOSTS_NET (default 10.77.0, a /24); namespaces and links are named
# $DUMPSTREAM_HOSTS_PREFIX-HOST (default dsh). Jars: jobs/target/dumpstream.jar (CLI, Kafka) and
# jobs/target/dumpstream-flink-job.jar (mvn -B package -DskipTests).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
self="$here/hosts.sh"
hstate="${DUMPSTREAM_HOSTS_DIR:-$repo/target/local-hosts}"
prefix="${DUMPSTREAM_HOSTS_PREFIX:-dsh}"
net="${DUMPSTREAM_HOSTS_NET:-10.77.0}"
cli_jar="${DUMPSTREAM_JAR:-$repo/jobs/target/dumpstream.jar}"
flink_jar="${DUMPSTREAM_CLUSTER_JAR:-$repo/jobs/target/dumpstream-flink-job.jar}"
bucket=dumpstream

hdie() {
    echo "hosts.sh: $*" >&2
    exit 1
}

[[ "$prefix" =~ ^[a-z][a-z0-9]{0,5}$ ]] || hdie "DUMPSTREAM_HOSTS_PREFIX must be 1..6 lowercase letters and digits, got '$prefix'"
[[ "$net" =~ ^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] || hdie "DUMPSTREAM_HOSTS_NET must be the first three numbers of a /24 such as 10.77.0, got '$net'"

# the Flink runtime's classpath, JVM options and memory flags: cluster.sh's, sourced
DUMPSTREAM_CLUSTER_DIR="$hstate/flink-common"
export DUMPSTREAM_CLUSTER_DIR
# shellcheck source=cluster.sh
source "$here/cluster.sh"

brokers() {
    cat "$hstate/brokers" 2>/dev/null || echo 1
}

all_hosts() {
    printf '%s\n' zk s3 jm1 jm2 tm1 tm2 tm3 rank
    local i
    for i in $(seq 1 "$(brokers)"); do echo "kafka$i"; done
}

address() {
    case "$1" in
        zk) echo "$net.2" ;;
        s3) echo "$net.3" ;;
        jm1) echo "$net.4" ;;
        jm2) echo "$net.5" ;;
        tm1) echo "$net.6" ;;
        tm2) echo "$net.7" ;;
        tm3) echo "$net.8" ;;
        rank) echo "$net.9" ;;
        kafka[1-9]) echo "$net.$((10 + ${1#kafka}))" ;;
        *) hdie "no host '$1' (hosts: $(all_hosts | tr '\n' ' '))" ;;
    esac
}

known_host() {
    # not grep -q: with pipefail, all_hosts cut off by grep's early exit would fail the test
    all_hosts | grep -x -- "$1" >/dev/null || hdie "no host '$1' (hosts: $(all_hosts | tr '\n' ' '))"
}

ns() {
    echo "$prefix-$1"
}

bootstrap() {
    local i out=()
    for i in $(seq 1 "$(brokers)"); do out+=("$(address "kafka$i"):9092"); done
    (IFS=,; echo "${out[*]}")
}

in_ns() {
    local h=$1
    shift
    ip netns exec "$(ns "$h")" "$@"
}

# true when ADDRESS:PORT accepts a connection within 2 s (from this machine, through the bridge)
answers() {
    timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>/dev/null
}

await_port() {
    local what=$1 addr=$2 port=$3 deadline=$((SECONDS + ${4:-120}))
    until answers "$addr" "$port"; do
        ((SECONDS < deadline)) || hdie "$what did not answer on $addr:$port (logs in $hstate/hosts)"
        sleep 0.3
    done
}

# --- the network ---------------------------------------------------------------------------------

# every namespace, process and link a previous run with this prefix left behind
clean_network() {
    local n
    for n in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$prefix-" || true); do
        local pids
        pids="$(ip netns pids "$n" 2>/dev/null || true)"
        # shellcheck disable=SC2086
        [[ -z "$pids" ]] || kill -KILL $pids 2>/dev/null || true
        ip netns del "$n" 2>/dev/null || true
    done
    ip link del "$prefix-br" 2>/dev/null || true
    rm -rf /etc/netns/"$prefix"-*
    for n in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E "^$prefix-" || true); do
        ip link del "$n" 2>/dev/null || true
    done
}

make_network() {
    ip link add "$prefix-br" type bridge
    ip addr add "$net.1/24" dev "$prefix-br"
    ip link set "$prefix-br" up
    local h
    for h in $(all_hosts); do
        ip netns add "$(ns "$h")"
        ip link add "$prefix-$h" type veth peer name eth0 netns "$(ns "$h")"
        ip link set "$prefix-$h" master "$prefix-br" up
        ip -n "$(ns "$h")" addr add "$(address "$h")/24" dev eth0
        ip -n "$(ns "$h")" link set eth0 up
        ip -n "$(ns "$h")" link set lo up
    done
    # names for every host, and no DNS server to wait for (ip netns exec mounts these over /etc/hosts and
    # /etc/resolv.conf): Flink and Kafka look addresses up and would wait seconds for each answer
    for h in $(all_hosts); do
        mkdir -p "/etc/netns/$(ns "$h")"
        {
            echo "127.0.0.1 localhost"
            local o
            for o in $(all_hosts); do echo "$(address "$o") $o"; done
        } >"/etc/netns/$(ns "$h")/hosts"
        printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n' >"/etc/netns/$(ns "$h")/resolv.conf"
    done
}

# --- processes -----------------------------------------------------------------------------------

hostdir() {
    echo "$hstate/hosts/$1"
}

# spawn HOST NAME COMMAND...: COMMAND in HOST's namespace, detached, in HOST's folder; pid in NAME.pid
spawn() {
    local h=$1 name=$2
    shift 2
    local d
    d="$(hostdir "$h")"
    mkdir -p "$d/log"
    # fd 8 is the lock of up/down: a daemon must not hold it
    (cd "$d" && exec ip netns exec "$(ns "$h")" setsid nohup "$@" >>"$d/log/$name.out" 2>&1 </dev/null 8>&-) &
    echo $! >"$d/$name.pid"
}

s3_env() {
    sed -n "s/^$1=//p" "$(hostdir s3)/s3/s3.env"
}

start_zk() {
    local d
    d="$(hostdir zk)"
    mkdir -p "$d/data"
    cat >"$d/zoo.cfg" <<EOF
# written by deploy/local/hosts.sh: one ZooKeeper server for Flink's JobManager high availability
tickTime=1000
dataDir=$d/data
clientPort=2181
clientPortAddress=$(address zk)
maxClientCnxns=0
minSessionTimeout=2000
maxSessionTimeout=20000
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr
EOF
    local cp=/usr/share/java/zookeeper.jar:/usr/share/java/zookeeper-jute.jar:/usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-simple.jar
    [[ -f /usr/share/java/zookeeper.jar ]] || hdie "ZooKeeper is not installed (apt-get install -y --no-install-recommends zookeeper; deploy/local/test-deps.sh does)"
    spawn zk zookeeper "$java_bin" -Xmx128m -Dzookeeper.jmx.log4j.disable=true -cp "$cp" \
        org.apache.zookeeper.server.ZooKeeperServerMain "$d/zoo.cfg"
}

start_s3() {
    local d
    d="$(hostdir s3)"
    mkdir -p "$d"
    # the monitor and the OSD on the host's own loopback, the gateway on its address
    in_ns s3 env S3_BIND_ADDRESS="$(address s3)" S3_PORT=7480 S3_MON_PORT=3300 S3_MON_V1_PORT=6789 \
        S3_MEMSTORE_BYTES="${S3_MEMSTORE_BYTES:-2147483648}" bash "$here/s3.sh" start "$d/s3" >"$d/s3-start.out" 8>&- \
        || hdie "the S3 server did not start on s3 (log: $d/s3/log)"
}

# curl signed with the S3 user's keys, read from a config on stdin (never on the command line)
s3_curl() {
    printf 'user = "%s:%s"\n' "$(s3_env access_key)" "$(s3_env secret_key)" \
        | curl -sS -K - --aws-sigv4 "aws:amz:us-east-1:s3" -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@"
}

make_bucket() {
    local code
    code="$(s3_curl -o /dev/null -w '%{http_code}' -X PUT "http://$(address s3):7480/$bucket")"
    [[ "$code" == 200 || "$code" == 409 ]] || hdie "creating the bucket $bucket answered HTTP $code"
}

start_kafka() {
    local h=$1 i=${1#kafka} n
    n="$(brokers)"
    local d voters="" j
    d="$(hostdir "$h")"
    for j in $(seq 1 "$n"); do voters+="${voters:+,}$j@$(address "kafka$j"):9093"; done
    local rf=1 isr=1
    if ((n >= 3)); then rf=3; isr=2; fi
    mkdir -p "$d/data" "$d/log"
    cat >"$d/server.properties" <<EOF
# written by deploy/local/hosts.sh: KRaft node $i of $n (broker and controller)
process.roles=broker,controller
node.id=$i
controller.quorum.voters=$voters
listeners=PLAINTEXT://$(address "$h"):9092,CONTROLLER://$(address "$h"):9093
advertised.listeners=PLAINTEXT://$(address "$h"):9092
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=$d/data
num.partitions=2
default.replication.factor=$rf
min.insync.replicas=$isr
offsets.topic.replication.factor=$rf
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=$isr
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
# as the project's own broker (LocalKafka.MAX_MESSAGE_BYTES): a 16 MiB manifest plus headroom, replicated whole
message.max.bytes=18874368
replica.fetch.max.bytes=18874368
replica.fetch.response.max.bytes=37748736
socket.request.max.bytes=150994944
EOF
    if [[ ! -f "$d/data/meta.properties" ]]; then
        "$java_bin" -cp "$cli_jar" kafka.tools.StorageTool format -t "$(cluster_id)" -c "$d/server.properties" \
            >>"$d/log/format.out" 2>&1 || hdie "formatting $h's log directory failed (output: $d/log/format.out)"
    fi
    spawn "$h" kafka "$java_bin" -Xmx384m -Xms384m -cp "$cli_jar" kafka.Kafka "$d/server.properties"
}

# one KRaft cluster id per `up`
cluster_id() {
    # 16 random bytes, URL-safe base64 without padding (what kafka-storage random-uuid prints), and like Kafka's
    # own ids never starting with '-': kafka-storage format would take "-t -xyz..." for a missing argument
    local id
    if [[ ! -s "$hstate/kafka-cluster-id" ]]; then
        id=-
        while [[ "$id" == -* ]]; do
            id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"
        done
        echo "$id" >"$hstate/kafka-cluster-id"
    fi
    cat "$hstate/kafka-cluster-id"
}

# create_topics TOPIC:PARTITIONS...
create_topics() {
    local n rf=1 isr=1
    n="$(brokers)"
    if ((n >= 3)); then rf=3; isr=2; fi
    "$java_bin" -cp "$cli_jar" "$here/CreateTopic.java" "$(bootstrap)" "$rf" "$isr" "$@" \
        >>"$hstate/create-topic.out" 2>&1 || hdie "creating topics $* failed (output: $hstate/create-topic.out)"
}

# the Flink settings every JobManager and TaskManager shares: HA on ZooKeeper, S3, fast failure detection
flink_common_conf() {
    cat <<EOF
high-availability.type: zookeeper
high-availability.zookeeper.quorum: $(address zk):2181
high-availability.zookeeper.path.root: /dumpstream
high-availability.cluster-id: /hosts
high-availability.storageDir: s3://$bucket/ha
high-availability.zookeeper.client.session-timeout: 6 s
high-availability.zookeeper.client.connection-timeout: 5 s
# ZooKeeper without authentication (its own host on the test network): no SASL attempt
zookeeper.sasl.disable: "true"
s3.endpoint: http://$(address s3):7480
s3.path.style.access: "true"
s3.signing-algorithm: S3SignerType
# a silent S3 host: fail a request in seconds (S3A's socket timeout is 200 s) and retry a few times
s3.connection.timeout: "10000"
s3.connection.establish.timeout: "5000"
s3.attempts.maximum: "3"
s3.retry.limit: "3"
heartbeat.interval: 1000
heartbeat.timeout: 15000
heartbeat.rpc-failure-threshold: 2
cluster.registration.error-delay: 1000ms
restart-strategy.exponential-delay.initial-backoff: 1 s
restart-strategy.exponential-delay.max-backoff: 5 s
execution.checkpointing.timeout: 30 s
execution.checkpointing.tolerable-failed-checkpoints: 1000
jobmanager.memory.process.size: 700m
taskmanager.memory.process.size: 900m
taskmanager.memory.managed.size: 0m
taskmanager.numberOfTaskSlots: 2
taskmanager.load-balance.mode: slots
jobmanager.rpc.port: 6123
blob.server.port: 6124
rest.port: 8081
taskmanager.rpc.port: 6122
taskmanager.data.port: 6121
env.java.opts.all: ${java_opts[*]}
env.java.opts.taskmanager: ${tm_java_opts[*]}
EOF
}

# start_flink HOST: a JobManager on jm*, a TaskManager on tm*
start_flink() {
    local h=$1 d main resources
    d="$(hostdir "$h")"
    mkdir -p "$d/conf" "$d/log" "$d/tmp" "$d/upload"
    {
        echo "# written by deploy/local/hosts.sh for $h"
        flink_common_conf
        echo "io.tmp.dirs: $d/tmp"
        if [[ "$h" == jm* ]]; then
            echo "jobmanager.rpc.address: $(address "$h")"
            echo "jobmanager.bind-host: $(address "$h")"
            echo "rest.address: $(address "$h")"
            echo "rest.bind-address: $(address "$h")"
            echo "web.upload.dir: $d/upload"
        else
            echo "taskmanager.host: $(address "$h")"
            echo "taskmanager.bind-host: $(address "$h")"
            echo "taskmanager.resource-id: $h"
        fi
    } >"$d/conf/config.yaml"
    write_log4j "$d/conf/log4j.properties"
    if [[ "$h" == jm* ]]; then
        main=org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint
        resources=GET_JM_RESOURCE_PARAMS
    else
        main=org.apache.flink.runtime.taskexecutor.TaskManagerRunner
        resources=GET_TM_RESOURCE_PARAMS
    fi
    # a restarted process starts a new log (leader_url reads the current process's)
    [[ ! -f "$d/log/flink.log" ]] || mv "$d/log/flink.log" "$d/log/flink.log.$(date +%s)"
    # cluster.sh's resource_params reads $conf/config.yaml and caches in $state
    local params jvm dyn role_opts=()
    params="$(state="$d" conf="$d/conf" resource_params "$resources")"
    jvm="$(sed -n 1p <<<"$params")"
    dyn="$(sed -n 2p <<<"$params")"
    [[ "$resources" != GET_TM_RESOURCE_PARAMS ]] || role_opts=("${tm_java_opts[@]}")
    # shellcheck disable=SC2086 # flag lists from BashJavaUtils are meant to split
    AWS_ACCESS_KEY_ID="$(s3_env access_key)" AWS_SECRET_ACCESS_KEY="$(s3_env secret_key)" FLINK_PLUGINS_DIR="$plugins" \
        spawn "$h" flink "$java_bin" $jvm "${java_opts[@]}" "${role_opts[@]}" -Dlog.file="$d/log/flink.log" \
        -Dlog4j.configurationFile="$d/conf/log4j.properties" -cp "$cp" "$main" --configDir "$d/conf" $dyn
}

# the agent: publishes every pair the ranks drop into the spool; Kafka client timeouts short enough
# that a partition is noticed in seconds (it keeps the pairs and retries)
start_rank() {
    local d
    d="$(hostdir rank)"
    mkdir -p "$d/spool"
    spawn rank agent "$java_bin" -Xmx384m -jar "$cli_jar" agent --spool "$d/spool" --bootstrap "$(bootstrap)" \
        --topic "$(cat "$hstate/topic")" --poll-ms 200 --kafka.request.timeout.ms=10000 \
        --kafka.delivery.timeout.ms=30000 --kafka.max.block.ms=10000 --kafka.reconnect.backoff.max.ms=2000
}

start_host() {
    local h=$1
    case "$h" in
        zk) start_zk ;;
        s3) start_s3 ;;
        kafka*) start_kafka "$h" ;;
        jm* | tm*) start_flink "$h" ;;
        rank) start_rank ;;
    esac
}

await_host() {
    local h=$1
    case "$h" in
        zk) await_port "ZooKeeper" "$(address zk)" 2181 ;;
        s3) await_port "the S3 gateway" "$(address s3)" 7480 ;;
        kafka*) await_port "Kafka on $h" "$(address "$h")" 9092 ;;
        jm*) await_port "the JobManager on $h" "$(address "$h")" 8081 ;;
        *) ;;
    esac
}

# the REST URL of the JobManager that leads now: every JobManager's REST endpoint answers (the standby's
# forwards to the leader), so the leader is the running one whose REST endpoint was last granted
# leadership, not revoked, in the log of its current process
leader_url() {
    local h last
    for h in jm1 jm2; do
        [[ -n "$(host_pids "$h")" ]] || continue
        last="$(grep -E 'DispatcherRestEndpoint - .*(was granted leadership|lost leadership)' \
            "$(hostdir "$h")/log/flink.log" 2>/dev/null | tail -n 1)"
        if [[ "$last" == *"was granted leadership"* ]]; then
            echo "http://$(address "$h"):8081"
            return 0
        fi
    done
    return 1
}

await_taskmanagers() {
    local want=$1 deadline=$((SECONDS + 180)) url n
    while true; do
        if url="$(leader_url)"; then
            n="$(curl -sf --max-time 5 "$url/taskmanagers" | jq -r '.taskmanagers | length' 2>/dev/null || echo 0)"
            [[ "$n" -ge "$want" ]] && return 0
        fi
        ((SECONDS < deadline)) || hdie "timed out: ${n:-0} of $want TaskManagers registered with a leading JobManager (logs in $hstate/hosts/*/log)"
        sleep 0.5
    done
}

write_env() {
    umask 077
    cat >"$hstate/hosts.env" <<EOF
bootstrap=$(bootstrap)
topic=$(cat "$hstate/topic")
zookeeper=$(address zk):2181
s3_endpoint=http://$(address s3):7480
bucket=$bucket
rest=http://$(address jm1):8081,http://$(address jm2):8081
spool=$(hostdir rank)/spool
s3_env=$(hostdir s3)/s3/s3.env
EOF
    cat "$hstate/hosts.env"
}

cmd_up() {
    local n=1 topic=dumps partitions=2 owner=""
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --brokers) n=${2:?--brokers needs a number}; shift 2 ;;
            --topic) topic=${2:?--topic needs a name}; shift 2 ;;
            --partitions) partitions=${2:?--partitions needs a number}; shift 2 ;;
            --owner-pid) owner=${2:?--owner-pid needs a pid}; shift 2 ;;
            *) hdie "up: unknown option '$1' (options: --brokers N --topic T --partitions P --owner-pid PID)" ;;
        esac
    done
    [[ "$n" =~ ^[1-9]$ ]] || hdie "up: --brokers must be 1..9, got '$n'"
    [[ "$partitions" =~ ^[1-9][0-9]?$ ]] || hdie "up: --partitions must be 1..99, got '$partitions'"
    [[ "$topic" =~ ^[A-Za-z0-9._-]{1,200}$ ]] || hdie "up: --topic must be letters, digits, '.', '_', '-', got '$topic'"
    [[ -z "$owner" || "$owner" =~ ^[0-9]+$ ]] || hdie "up: --owner-pid must be a process id, got '$owner'"
    [[ "$(id -u)" == 0 ]] || hdie "up: network namespaces need root (ip netns, iptables); running as uid $(id -u)"
    for tool in ip iptables jq curl; do command -v "$tool" >/dev/null || hdie "up: $tool is needed (deploy/local/test-deps.sh installs it)"; done
    [[ -f "$cli_jar" && -f "$flink_jar" ]] || hdie "up: build the jars first (mvn -B package -DskipTests): $cli_jar, $flink_jar"
    compgen -G "$plugins/*/*.jar" >/dev/null || hdie "up: no Flink plugins in $plugins (mvn -B package -DskipTests)"
    stop_watchdog
    clean_network
    rm -rf "$hstate/hosts" "$hstate/kafka-cluster-id"
    mkdir -p "$hstate/hosts" "$hstate/flink-common/log"
    echo "$n" >"$hstate/brokers"
    echo "$topic" >"$hstate/topic"
    trap 'rc=$?; if [[ $rc -ne 0 ]]; then echo "hosts.sh: up failed, taking the hosts down" >&2; cmd_down >/dev/null 2>&1; fi' EXIT
    make_network
    [[ -z "$owner" ]] || start_watchdog "$owner"
    cp="$(classpath)"
    local h
    start_zk
    start_s3
    make_bucket
    for h in $(all_hosts | grep kafka); do start_kafka "$h"; done
    for h in $(all_hosts | grep kafka); do await_host "$h"; done
    create_topics "$topic:$partitions" "$topic.dlq:1"
    await_host zk
    for h in jm1 jm2 tm1 tm2 tm3; do start_flink "$h"; done
    start_rank
    await_taskmanagers 3
    trap - EXIT
    write_env
}

cmd_down() {
    stop_watchdog
    ranks_stop >/dev/null 2>&1 || true
    clean_network
    echo "hosts down"
}

start_watchdog() {
    # takes the hosts down once the owner (a test JVM) is gone; ends by itself after a down
    echo "$1" >"$hstate/owner.pid"
    setsid nohup bash -c 'while kill -0 "$(cat "$2/owner.pid" 2>/dev/null)" 2>/dev/null; do sleep 1; done
        [[ -f "$2/owner.pid" ]] && exec bash "$1" down' hosts-watchdog "$self" "$hstate" \
        >>"$hstate/watchdog.out" 2>&1 </dev/null 8>&- &
    echo $! >"$hstate/watchdog.pid"
}

stop_watchdog() {
    local wd
    wd="$(cat "$hstate/watchdog.pid" 2>/dev/null || true)"
    rm -f "$hstate/owner.pid" "$hstate/watchdog.pid"
    if [[ -n "$wd" && "$wd" != "$$" && "$wd" != "$PPID" ]]; then
        kill -TERM "$wd" 2>/dev/null || true
    fi
}

host_pids() {
    ip netns pids "$(ns "$1")" 2>/dev/null || true
}

cmd_kill() {
    local h=${1:?kill needs a HOST}
    known_host "$h"
    local pids
    pids="$(host_pids "$h")"
    [[ -n "$pids" ]] || hdie "kill: nothing runs on $h"
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true # one may have exited since it was listed
    local deadline=$((SECONDS + 30))
    while [[ -n "$(host_pids "$h")" ]] && ((SECONDS < deadline)); do sleep 0.1; done
    [[ -z "$(host_pids "$h")" ]] || hdie "kill: $h still runs processes after 30 s ($(host_pids "$h" | tr '\n' ' '))"
    echo "killed $(wc -w <<<"$pids") processes on $h"
}

cmd_start() {
    local h=${1:?start needs a HOST}
    known_host "$h"
    [[ -z "$(host_pids "$h")" ]] || hdie "start: $h still runs processes ($(host_pids "$h" | tr '\n' ' '))"
    cp="$(classpath)"
    start_host "$h"
    await_host "$h"
    echo "started $h"
}

cmd_link() {
    local updown=$1 h=${2:?link-$1 needs a HOST}
    known_host "$h"
    ip link set "$prefix-$h" "$updown"
    echo "link of $h $updown"
}

cmd_cut() {
    local h=${1:?cut needs a HOST} from=""
    shift
    known_host "$h"
    if [[ "${1:-}" == --from ]]; then
        from=${2:?--from needs HOST[,HOST...]}
    elif [[ $# -gt 0 ]]; then
        hdie "cut: unknown option '$1' (cut HOST [--from HOST2[,HOST3...]])"
    fi
    local peers=() p
    if [[ -z "$from" ]]; then
        in_ns "$h" iptables -A INPUT -i eth0 -j DROP
        in_ns "$h" iptables -A OUTPUT -o eth0 -j DROP
        echo "cut $h from every host"
        return
    fi
    IFS=, read -r -a list <<<"$from"
    for p in "${list[@]}"; do
        if [[ "$p" == kafka ]]; then
            while read -r k; do peers+=("$k"); done < <(all_hosts | grep kafka)
        else
            known_host "$p"
            peers+=("$p")
        fi
    done
    for p in "${peers[@]}"; do
        in_ns "$h" iptables -A INPUT -s "$(address "$p")" -j DROP
        in_ns "$h" iptables -A OUTPUT -d "$(address "$p")" -j DROP
    done
    echo "cut $h from ${peers[*]}"
}

cmd_heal() {
    local h=${1:?heal needs a HOST}
    known_host "$h"
    in_ns "$h" iptables -F INPUT
    in_ns "$h" iptables -F OUTPUT
    ip link set "$prefix-$h" up
    echo "healed $h"
}

ranks_stop() {
    local pf
    pf="$(hostdir rank)/ranks.pid"
    if [[ -s "$pf" ]] && kill -0 "$(cat "$pf")" 2>/dev/null; then
        local pid
        pid="$(cat "$pf")"
        # ip netns exec, setsid and nohup exec the JVM: the pid is simulate's
        kill -TERM "$pid" 2>/dev/null || true
        local deadline=$((SECONDS + 30))
        while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$pf"
}

cmd_ranks() {
    case "${1:-}" in
        start)
            shift
            local rate=2 run_id="" seed
            while [[ $# -gt 0 ]]; do
                case "$1" in
                    --rate) rate=${2:?--rate needs dumps per second}; shift 2 ;;
                    --run-id) run_id=${2:?--run-id needs an id}; shift 2 ;;
                    *) hdie "ranks start: unknown option '$1' (options: --rate DUMPS_PER_S --run-id ID)" ;;
                esac
            done
            local d
            d="$(hostdir rank)"
            [[ -d "$d/spool" ]] || hdie "ranks: no hosts (hosts.sh up first)"
            if [[ -s "$d/ranks.pid" ]] && kill -0 "$(cat "$d/ranks.pid")" 2>/dev/null; then
                hdie "ranks start: the ranks are running (ranks stop first)"
            fi
            # a new seed and run id each start: no two starts produce the same dump
            seed=$(($(cat "$d/ranks.seed" 2>/dev/null || echo 0) + 1))
            echo "$seed" >"$d/ranks.seed"
            run_id=${run_id:-hosts-$seed}
            spawn rank ranks "$java_bin" -Xmx256m -jar "$cli_jar" simulate --out "$d/spool" --ranks 2 \
                --launches 1000000 --records 4 --payload-bytes 4096 --seed "$seed" --run-id "$run_id" --rate "$rate"
            echo "ranks writing run $run_id into $d/spool at $rate dumps/s"
            ;;
        stop)
            ranks_stop
            echo "ranks stopped"
            ;;
        *) hdie "ranks start|stop" ;;
    esac
}

cmd_status() {
    [[ -s "$hstate/brokers" ]] || hdie "no hosts in $hstate (hosts.sh up)"
    local h
    for h in $(all_hosts); do
        local link rules procs
        if ! ip netns list | awk '{print $1}' | grep -x "$(ns "$h")" >/dev/null; then
            echo "$h $(address "$h") (no namespace)"
            continue
        fi
        link="$(ip -o link show "$prefix-$h" 2>/dev/null | grep 'state UP' >/dev/null && echo up || echo down)"
        rules="$(in_ns "$h" iptables -S 2>/dev/null | grep -c DROP || true)"
        procs="$(host_pids "$h" | wc -l)"
        echo "$h $(address "$h") link $link, $rules drop rules, $procs processes"
    done
    echo "leader $(leader_url || echo none)"
}

cmd_submit() {
    local url
    url="$(leader_url)" || hdie "submit: no JobManager leads (hosts.sh status)"
    mkdir -p "$hstate/submit"
    echo "$url" >"$hstate/submit/rest-url"
    DUMPSTREAM_CLUSTER_DIR="$hstate/submit" DUMPSTREAM_CLUSTER_JAR="$flink_jar" bash "$here/cluster.sh" submit "$@"
}

mkdir -p "$hstate/flink-common/log"
case "${1:-}" in
    up | down)
        exec 8>"$hstate/.lock"
        flock -w 300 8 || hdie "another hosts.sh up/down has held $hstate/.lock for 300 s"
        if [[ "$1" == up ]]; then shift; cmd_up "$@"; else cmd_down; fi
        ;;
    status) cmd_status ;;
    exec) shift; h=${1:?exec needs HOST CMD...}; known_host "$h"; shift; in_ns "$h" "$@" ;;
    kill) shift; cmd_kill "$@" ;;
    start) shift; cmd_start "$@" ;;
    link-down) shift; cmd_link down "$@" ;;
    link-up) shift; cmd_link up "$@" ;;
    cut) shift; cmd_cut "$@" ;;
    heal) shift; cmd_heal "$@" ;;
    ranks) shift; cmd_ranks "$@" ;;
    submit) shift; cmd_submit "$@" ;;
    leader)
        url="$(leader_url)" || hdie "no JobManager leads"
        if [[ "${2:-}" == --host ]]; then
            for h in jm1 jm2; do [[ "$url" != "http://$(address "$h"):8081" ]] || echo "$h"; done
        else
            echo "$url"
        fi
        ;;
    *) sed -n '2,40p' "$self" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
