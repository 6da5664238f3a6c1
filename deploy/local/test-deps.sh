#!/usr/bin/env bash
# Installs what the tests need beyond Java 17 and Maven, from Debian's packages, only where missing:
#   curl, jq             deploy/local/cluster.sh (the standalone cluster test)
#   chromium             the compare report test renders HTML in headless Chromium
#   python3-torch        TorchReferenceTest's eager reference (torch 1.13: about 185 MB of packages)
#   ceph-mon ceph-osd radosgw ceph-common (+ceph-mgr)
#                        the S3 server of the tests (deploy/local/s3.sh: Ceph's RADOS Gateway, one node)
#   postgresql           the Iceberg tests' JDBC catalog (deploy/local/postgres.sh)
#   zookeeper iptables iproute2
#                        the test hosts of deploy/local/hosts.sh (HostsFaultsIT): ZooKeeper for the JobManagers'
#                        high availability (run as a plain JVM, not the service), packet drops, namespaces
# Trino 476 runs on the Temurin 25 JDK every machine of this kind has in /usr/lib/jvm (TRINO_JAVA_HOME overrides).
# Usage: bash deploy/local/test-deps.sh   (as root, or with sudo)
set -euo pipefail
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
pkgs=()       # installed as .ci/run always did (with their recommended packages: Chromium's fonts, for one)
for tool in curl jq chromium; do command -v "$tool" >/dev/null || pkgs+=("$tool"); done
/usr/bin/python3 -c "import torch" 2>/dev/null || pkgs+=(python3-torch)
[ -x /usr/lib/postgresql/15/bin/pg_ctl ] || pkgs+=(postgresql)
ceph=()      # only what the one-node server needs (22 s from a warm mirror)
for tool in ceph-mon ceph-osd radosgw ceph; do command -v "$tool" >/dev/null || ceph=(ceph-mon ceph-mgr ceph-osd radosgw ceph-common); done
# the test hosts, also without recommended packages
[ -f /usr/share/java/zookeeper.jar ] || ceph+=(zookeeper)
command -v iptables >/dev/null || ceph+=(iptables)
command -v ip >/dev/null || ceph+=(iproute2)
if [ ${#pkgs[@]} -gt 0 ] || [ ${#ceph[@]} -gt 0 ]; then
  echo "test-deps: installing ${pkgs[*]} ${ceph[*]}" >&2
  $SUDO apt-get update -qq
  if [ ${#pkgs[@]} -gt 0 ]; then
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}" >/dev/null
  fi
  if [ ${#ceph[@]} -gt 0 ]; then
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${ceph[@]}" >/dev/null
  fi
fi
echo "test-deps: every package the tests need is installed" >&2
