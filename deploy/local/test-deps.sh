#!/usr/bin/env bash
# Installs what the tests need beyond Java 17 and Maven, from Debian's packages, only where missing:
#   curl, jq             deploy/local/cluster.sh (the standalone cluster test)
#   chromium             the compare report test renders HTML in headless Chromium
#   python3-torch        TorchReferenceTest's eager reference (torch 1.13: about 185 MB of packages)
#   ceph-mon ceph-osd radosgw ceph-common (+ceph-mgr)
#                        the S3 server of the tests (deploy/local/s3.sh: Ceph's RADOS Gateway, one node)
#   postgresql           the Iceberg tests' JDBC catalog (deploy/local/postgres.sh)
# Trino 476 runs on the Temurin 25 JDK every machine of this kind has in /usr/lib/jvm (TRINO_JAVA_HOME overrides).
# Usage: bash deploy/local/test-deps.sh   (as root, or with sudo)
set -euo pipefail
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
pkgs=()
for tool in curl jq chromium; do command -v "$tool" >/dev/null || pkgs+=("$tool"); done
/usr/bin/python3 -c "import torch" 2>/dev/null || pkgs+=(python3-torch)
ceph=0
for tool in ceph-mon ceph-osd radosgw ceph; do command -v "$tool" >/dev/null || ceph=1; done
[ "$ceph" -eq 0 ] || pkgs+=(ceph-mon ceph-mgr ceph-osd radosgw ceph-common)
[ -x /usr/lib/postgresql/15/bin/pg_ctl ] || pkgs+=(postgresql)
if [ ${#pkgs[@]} -gt 0 ]; then
  echo "test-deps: installing ${pkgs[*]}" >&2
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
fi
echo "test-deps: every package the tests need is installed" >&2
