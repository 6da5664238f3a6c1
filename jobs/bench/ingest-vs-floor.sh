#!/usr/bin/env bash
# Issue 15: the job's CPU per MiB against the floor's, same backlog, same JVM (see BENCHMARKS.md).
# Prints one `ingest-vs-floor shape=... ratio=...` line per shape. Extra -D knobs pass through:
#   bash jobs/bench/ingest-vs-floor.sh -Dbench.rounds=3 -Dbench.shapes=1MiB -Dbench.zstdLevel=3
set -euo pipefail
cd "$(dirname "$0")/../.."
log=$(mktemp -t ingest-vs-floor.XXXXXX.log)
mvn -B -q -o -pl jobs -am verify -Dtest=IngestVsFloorBenchmark -Dsurefire.failIfNoSpecifiedTests=false \
    -DexcludedTags=none -DskipITs "-Dtest.jvmArgs=-XX:+UseParallelGC" "$@" >"$log" 2>&1 || { tail -50 "$log"; exit 1; }
grep -E '^(ingest-vs-floor|  shape=|  garbage collector| *(1MiB|64MiB) (round|warm-up))' "$log" || { tail -50 "$log"; exit 1; }
echo "(full log: $log)"
