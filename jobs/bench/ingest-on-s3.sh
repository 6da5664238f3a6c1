#!/usr/bin/env bash
# Issue 31: the ingest job to local disk and to the Ceph S3 test server (deploy/local/s3.sh), both dump shapes,
# compaction off and on, in one JVM (see BENCHMARKS.md, "Ingest on S3"). Prints per job a line, then a table of
# CPU per MiB, S3 requests per checkpoint (counted by radosgw), files per checkpoint and publish-to-commit and
# publish-to-visible p50/p95, ratios, and the jobs' S3 requests by kind. Extra -D knobs pass through:
#   bash jobs/bench/ingest-on-s3.sh -Dbench.rounds=1 -Dbench.shapes=1MiB -Dbench.interval=10 -Dbench.seconds=30
#   bash jobs/bench/ingest-on-s3.sh -Dbench.flink.s3.upload.min.part.size=16777216   # any Flink S3 setting
set -euo pipefail
cd "$(dirname "$0")/../.."
log=$(mktemp -t ingest-on-s3.XXXXXX.log)
mvn -B -q -o -pl jobs -am test -Dtest=IngestOnS3Benchmark -Dsurefire.failIfNoSpecifiedTests=false \
    -DexcludedTags=none "-Dtest.jvmArgs=-XX:+UseParallelGC" "$@" >"$log" 2>&1 || { tail -50 "$log"; exit 1; }
grep -E '^(1MiB|64MiB) (local|s3) ' "$log" || { tail -50 "$log"; exit 1; }
echo
sed -n '/^ingest-on-s3: /,/^$/p' "$log"
grep -E '^ingest-on-s3 shape=' "$log"
sed -n '/^S3 requests of the jobs by kind/,/^$/p' "$log"
echo "(full log: $log)"
