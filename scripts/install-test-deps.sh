#!/usr/bin/env bash
# Install what the non-Python client integration tests need, each from the project's own pinned files:
#   - kcat (Debian package)
#   - KafkaJS and its pure-JS codecs (tests/clients/node, from package-lock.json)
#   - the Apache Kafka Java clients, each set from Maven Central with Maven's strict checksum checks: the current
#     one (kafka-clients and kafka-streams 4.3, tests/clients/java/pom.xml, into .cache/java/4.3) and the old one
#     (kafka-clients 3.9, tests/clients/java/3.9/pom.xml, into .cache/java/3.9), with their codec jars
#   - the Go clients (tests/clients/go/old and tests/clients/go/current, Go modules pinned by their go.mod and
#     go.sum, from the Go module proxy) with the preinstalled Go toolchain; their build cache is warmed here so
#     the tests build offline
# Idempotent: every step is skipped when its result is already in place. Each step prints one line first.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

JAVA_CACHE="$ROOT/.cache/java"
# Each Java client set: its folder under .cache/java, its pom, the jars it must bring (tests find them by name)
JAVA_SETS=(
    "4.3|tests/clients/java/pom.xml|kafka-clients kafka-streams rocksdbjni jackson-databind jackson-core jackson-annotations slf4j-api lz4-java snappy-java zstd-jni"
    "3.9|tests/clients/java/3.9/pom.xml|kafka-clients slf4j-api lz4-java snappy-java zstd-jni"
)
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
# Each set's stamp holds its pom's hash: a changed pom or a missing jar copies that set again.
have_all_jars() {  # dir stamp hash jar...
    local dir="$1" stamp="$2" hash="$3" name
    shift 3
    [[ -f "$stamp" && "$(cat "$stamp")" == "$hash" ]] || return 1
    for name in "$@"; do
        [[ -f "$dir/$name.jar" ]] || return 1
    done
}
for java_set in "${JAVA_SETS[@]}"; do
    IFS='|' read -r set_version set_pom set_jars <<< "$java_set"
    read -r -a jars <<< "$set_jars"
    set_dir="$JAVA_CACHE/$set_version"
    stamp="$set_dir/.pom.sha256"
    pom_hash="$(sha256sum "$ROOT/$set_pom" | cut -d' ' -f1)"
    if have_all_jars "$set_dir" "$stamp" "$pom_hash" "${jars[@]}"; then
        log "Java client jars $set_version: in place"
        continue
    fi
    log "resolving the Java client jars $set_version of $set_pom from Maven Central"
    rm -rf "$set_dir"
    mkdir -p "$set_dir"
    # -C: fail on a checksum mismatch instead of warning; versions stripped so the tests find each jar by name
    mvn -B -q -C -Dstyle.color=never -f "$ROOT/$set_pom" dependency:copy-dependencies \
        -DoutputDirectory="$set_dir" -Dmdep.stripVersion=true -DincludeScope=runtime
    for name in "${jars[@]}"; do
        [[ -f "$set_dir/$name.jar" ]] || die "$name.jar did not come with $set_pom"
    done
    echo "$pom_hash" > "$stamp"
    version="$(jar_version "$set_dir/kafka-clients.jar")"
    log "kafka-clients ${version:-?} ready in $set_dir"
done

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
