#!/usr/bin/env bash
# Install what the non-Python client integration tests need, each from the project's own pinned files:
#   - kcat (Debian package)
#   - KafkaJS and its pure-JS codecs (tests/clients/node, from package-lock.json)
#   - the Apache Kafka Java client 3.9 and its codec jars (tests/clients/java/pom.xml, from Maven Central with
#     Maven's strict checksum checks, into .cache/java)
#   - the Go clients (tests/clients/go/old and tests/clients/go/current, Go modules pinned by their go.mod and
#     go.sum, from the Go module proxy) with the preinstalled Go toolchain; their build cache is warmed here so
#     the tests build offline
# Idempotent: every step is skipped when its result is already in place. Each step prints one line first.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

JAVA_DIR="$ROOT/.cache/java"
JAVA_POM="$ROOT/tests/clients/java/pom.xml"
JARS=(kafka-clients slf4j-api lz4-java snappy-java zstd-jni)
NODE_DIR="$ROOT/tests/clients/node"
GO_MODULES=("$ROOT/tests/clients/go/old" "$ROOT/tests/clients/go/current")
GO_MIN_MINOR=26  # the `go` line of tests/clients/go/current/go.mod (its golang.org/x dependencies ask for it)

# shellcheck source=install-common.sh
source "$ROOT/scripts/install-common.sh"

APT_UPDATED=0
apt_install() {
    if [[ $APT_UPDATED == 0 ]]; then
        log "apt-get update"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        APT_UPDATED=1
    fi
    log "apt-get install $*"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# --- system packages -------------------------------------------------------
log "checking system packages (kcat, JDK, Maven, Node)"
command -v kcat >/dev/null 2>&1 || apt_install kcat
command -v javac >/dev/null 2>&1 || apt_install default-jdk-headless
command -v mvn >/dev/null 2>&1 || apt_install maven
command -v npm >/dev/null 2>&1 || apt_install nodejs npm

# --- KafkaJS ---------------------------------------------------------------
# node_modules/.package-lock.json is written by npm after a successful install.
if [[ ! -f "$NODE_DIR/node_modules/.package-lock.json" \
      || "$NODE_DIR/package-lock.json" -nt "$NODE_DIR/node_modules/.package-lock.json" \
      || "$NODE_DIR/package.json" -nt "$NODE_DIR/node_modules/.package-lock.json" ]]; then
    log "installing KafkaJS into $NODE_DIR (npm ci)"
    (cd "$NODE_DIR" && npm ci --no-audit --no-fund --loglevel=error)
else
    log "KafkaJS: in place"
fi

# --- Java client jars (Maven Central) ----------------------------------------
# The stamp holds the pom's hash: a changed pom or a missing jar copies the jars again.
java_stamp="$JAVA_DIR/.pom.sha256"
pom_hash="$(sha256sum "$JAVA_POM" | cut -d' ' -f1)"
have_all_jars() {
    local name
    [[ -f "$java_stamp" && "$(cat "$java_stamp")" == "$pom_hash" ]] || return 1
    for name in "${JARS[@]}"; do
        [[ -f "$JAVA_DIR/$name.jar" ]] || return 1
    done
}
if ! have_all_jars; then
    log "resolving the Java client jars of tests/clients/java/pom.xml from Maven Central"
    rm -rf "$JAVA_DIR"
    mkdir -p "$JAVA_DIR"
    # -C: fail on a checksum mismatch instead of warning; versions stripped so the tests find each jar by name
    mvn -B -q -C -Dstyle.color=never -f "$JAVA_POM" dependency:copy-dependencies -DoutputDirectory="$JAVA_DIR" \
        -Dmdep.stripVersion=true -DincludeScope=runtime
    for name in "${JARS[@]}"; do
        [[ -f "$JAVA_DIR/$name.jar" ]] || die "$name.jar did not come with tests/clients/java/pom.xml"
    done
    echo "$pom_hash" > "$java_stamp"
    version="$(jar_version "$JAVA_DIR/kafka-clients.jar")"
    log "kafka-clients ${version:-?} ready in $JAVA_DIR"
else
    log "Java client jars: in place"
fi

# --- Go clients (Go module proxy) ---------------------------------------------
command -v go >/dev/null 2>&1 || die "the go toolchain is not on PATH: Go 1.$GO_MIN_MINOR or later is needed"
go_minor="$(go env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')"
[[ -n "$go_minor" && "$go_minor" -ge $GO_MIN_MINOR ]] \
    || die "$(go env GOVERSION) is too old: Go 1.$GO_MIN_MINOR or later is needed"
for module in "${GO_MODULES[@]}"; do
    name="${module#"$ROOT"/}"
    log "Go modules of $name: download (go.sum checked) and build (minutes when Go's build cache is cold)"
    # -mod=readonly: go.mod and go.sum are the pins; a build that would change them fails instead
    (cd "$module" && GOFLAGS=-mod=readonly go mod download && GOFLAGS=-mod=readonly go build ./...)
done
bash "$ROOT/scripts/install-reference-kafka.sh" 4.3.1  # the reference Apache Kafka (tests/differential)
log "done"
