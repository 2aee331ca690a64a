#!/usr/bin/env bash
# Install what the non-Python client integration tests need:
#   - kcat (Debian package)
#   - KafkaJS and its pure-JS codecs (tests/clients/node, from package-lock.json)
#   - the Apache Kafka Java client 3.9 and its codec jars (into .cache/java)
#   - Go and the Go clients sarama and segmentio kafka-go (Debian packages: Debian's Go toolchain builds
#     tests/clients/go in GOPATH mode from /usr/share/gocode, with no module download)
# Idempotent: every step is skipped when its result is already in place.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-.venv/bin/python}"

FLINK_LIBS="shigawire-apache-flink-libraries==2.0.0.post1"
WHEEL_DIR="$ROOT/.cache/wheels"
JAVA_DIR="$ROOT/.cache/java"
NODE_DIR="$ROOT/tests/clients/node"
JARS=(kafka-clients slf4j-api lz4-java snappy-java zstd-jni)
# Pinned sha256 of the downloaded wheel and of each jar taken from it: nothing else runs in the tests' JVM.
FLINK_WHEEL="shigawire_apache_flink_libraries-2.0.0.post1-py3-none-any.whl"
FLINK_WHEEL_SHA256="aaa65537d3f0c0ff279185d8243024f0efd95788ba044bf249ba0f40b69289cd"
declare -A JAR_SHA256=(
    [kafka-clients]="7568b998572d256f0b7bc0afdc1b7a2588b8b08415c62ce314c864a6851ae9d9"
    [slf4j-api]="d3ef575e3e4979678dc01bf1dcce51021493b4d11fb7f1be8ad982877c16a1c0"
    [lz4-java]="d74a3334fb35195009b338a951f918203d6bbca3d1d359033dc33edd1cadc9ef"
    [snappy-java]="4c766cb3f855415ee734b2392949a0b6f12a60879334a74518deaf6270d32e36"
    [zstd-jni]="793ca8734aa15687e7e64564eab8b6ae9ee2720eae27aa663074682144b1c386"
)

log() { echo "install-test-deps: $*" >&2; }

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# verify FILE SHA256: fail with both hashes, and remove FILE, when it is not the pinned one
verify() {
    local actual
    actual="$(sha256_of "$1")"
    if [[ "$actual" != "$2" ]]; then
        log "sha256 mismatch for $1: expected $2, got $actual; removed it, refusing to use it"
        rm -f "$1"
        exit 1
    fi
}

APT_UPDATED=0
apt_install() {
    if [[ $APT_UPDATED == 0 ]]; then
        DEBIAN_FRONTEND=noninteractive apt-get update -q
        APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

# --- system packages -------------------------------------------------------
if ! command -v kcat >/dev/null 2>&1; then
    log "installing kcat"
    apt_install kcat
fi
if ! command -v javac >/dev/null 2>&1; then
    log "installing a JDK"
    apt_install default-jdk-headless
fi
if ! command -v npm >/dev/null 2>&1; then
    log "installing node and npm"
    apt_install nodejs npm
fi
if ! command -v unzip >/dev/null 2>&1; then
    apt_install unzip
fi
GO_PACKAGES=(golang-go golang-github-shopify-sarama-dev golang-github-segmentio-kafka-go-dev)
if ! command -v go >/dev/null 2>&1 \
        || [[ ! -d /usr/share/gocode/src/github.com/Shopify/sarama \
              || ! -d /usr/share/gocode/src/github.com/segmentio/kafka-go ]]; then
    log "installing Go, sarama and kafka-go"
    apt_install "${GO_PACKAGES[@]}"
fi

# --- KafkaJS ---------------------------------------------------------------
# node_modules/.package-lock.json is written by npm after a successful install.
if [[ ! -f "$NODE_DIR/node_modules/.package-lock.json" \
      || "$NODE_DIR/package-lock.json" -nt "$NODE_DIR/node_modules/.package-lock.json" \
      || "$NODE_DIR/package.json" -nt "$NODE_DIR/node_modules/.package-lock.json" ]]; then
    log "installing KafkaJS in $NODE_DIR"
    (cd "$NODE_DIR" && npm ci --no-audit --no-fund --loglevel=error)
fi

# --- Java client jars ------------------------------------------------------
# Every run checks the jars' hashes (a fraction of a second); a missing or changed jar is extracted again.
have_all_jars() {
    local name
    for name in "${JARS[@]}"; do
        [[ -f "$JAVA_DIR/$name.jar" && "$(sha256_of "$JAVA_DIR/$name.jar")" == "${JAR_SHA256[$name]}" ]] || return 1
    done
}

if ! have_all_jars; then
    mkdir -p "$WHEEL_DIR" "$JAVA_DIR"
    wheel="$WHEEL_DIR/$FLINK_WHEEL"
    if [[ -f "$wheel" && "$(sha256_of "$wheel")" != "$FLINK_WHEEL_SHA256" ]]; then
        log "discarding $wheel: not the pinned sha256 (a partial download?)"
        rm -f "$wheel"
    fi
    if [[ ! -f "$wheel" ]]; then
        log "downloading $FLINK_LIBS"
        "$PYTHON" -m pip download --quiet --no-deps "$FLINK_LIBS" -d "$WHEEL_DIR"
        [[ -f "$wheel" ]] || { log "pip download did not produce $wheel"; exit 1; }
        verify "$wheel" "$FLINK_WHEEL_SHA256"
    fi
    patterns=()
    for name in "${JARS[@]}"; do
        patterns+=("pyflink/lib/$name.jar")
    done
    log "extracting ${JARS[*]} from $(basename "$wheel")"
    unzip -o -q -j "$wheel" "${patterns[@]}" -d "$JAVA_DIR"
    for name in "${JARS[@]}"; do
        [[ -f "$JAVA_DIR/$name.jar" ]] || { log "$name.jar is not in $(basename "$wheel")"; exit 1; }
        verify "$JAVA_DIR/$name.jar" "${JAR_SHA256[$name]}"
    done
    version="$(unzip -p "$JAVA_DIR/kafka-clients.jar" kafka/kafka-version.properties | sed -n 's/^version=//p')"
    log "kafka-clients $version ready in $JAVA_DIR"
fi
