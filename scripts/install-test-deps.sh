#!/usr/bin/env bash
# Install what the non-Python client integration tests need:
#   - kcat (Debian package)
#   - KafkaJS and its pure-JS codecs (tests/clients/node, from package-lock.json)
#   - the Apache Kafka Java client 3.9 and its codec jars (into .cache/java)
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

log() { echo "install-test-deps: $*" >&2; }

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

# --- KafkaJS ---------------------------------------------------------------
# node_modules/.package-lock.json is written by npm after a successful install.
if [[ ! -f "$NODE_DIR/node_modules/.package-lock.json" \
      || "$NODE_DIR/package-lock.json" -nt "$NODE_DIR/node_modules/.package-lock.json" \
      || "$NODE_DIR/package.json" -nt "$NODE_DIR/node_modules/.package-lock.json" ]]; then
    log "installing KafkaJS in $NODE_DIR"
    (cd "$NODE_DIR" && npm ci --no-audit --no-fund --loglevel=error)
fi

# --- Java client jars ------------------------------------------------------
have_all_jars() {
    local name
    for name in "${JARS[@]}"; do
        compgen -G "$JAVA_DIR/$name*.jar" >/dev/null || return 1
    done
}

if ! have_all_jars; then
    mkdir -p "$WHEEL_DIR" "$JAVA_DIR"
    wheel="$(compgen -G "$WHEEL_DIR/shigawire_apache_flink_libraries-2.0.0.post1-*.whl" | head -n1 || true)"
    if [[ -z "$wheel" ]]; then
        log "downloading $FLINK_LIBS"
        "$PYTHON" -m pip download --quiet --no-deps "$FLINK_LIBS" -d "$WHEEL_DIR"
        wheel="$(compgen -G "$WHEEL_DIR/shigawire_apache_flink_libraries-2.0.0.post1-*.whl" | head -n1)"
    fi
    patterns=()
    for name in "${JARS[@]}"; do
        patterns+=("pyflink/lib/$name*.jar")
    done
    log "extracting ${JARS[*]} from $(basename "$wheel")"
    unzip -o -q -j "$wheel" "${patterns[@]}" -d "$JAVA_DIR"
    have_all_jars || { log "missing jars in $JAVA_DIR after extraction"; exit 1; }
    version="$(unzip -p "$JAVA_DIR"/kafka-clients*.jar kafka/kafka-version.properties | sed -n 's/^version=//p')"
    if [[ "$version" != 3.9.* ]]; then
        log "expected kafka-clients 3.9.x, found '${version}'"
        exit 1
    fi
    log "kafka-clients $version ready in $JAVA_DIR"
fi
