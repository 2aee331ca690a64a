#!/usr/bin/env bash
# Install the reference Apache Kafka broker the differential tests run beside minibroker: the jars of one
# release (kafka_2.13, kafka-tools and an SLF4J binding, tests/reference/pom.xml) from Maven Central with
# Maven's strict checksum checks, into .cache/kafka/<version>.
#
#   scripts/install-reference-kafka.sh [version]     # 4.3.1 by default
#
# Idempotent: a stamp holding the pom's hash and the version makes a second run a no-op. Each step prints one
# line first.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

VERSION="${1:-4.3.1}"
POM="$ROOT/tests/reference/pom.xml"
DIR="$ROOT/.cache/kafka/$VERSION"
STAMP="$DIR/.installed"

# shellcheck source=install-common.sh
source "$ROOT/scripts/install-common.sh"

[[ "$VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "not a Kafka release: $VERSION"
command -v java >/dev/null 2>&1 || die "java is not on PATH: the reference Kafka $VERSION needs a JDK 17 or later"
command -v mvn >/dev/null 2>&1 || die "mvn is not on PATH: the reference Kafka $VERSION is resolved with Maven"

# The stamp holds what the jars were resolved from: a changed pom (or another version) copies them again.
want="$(sha256sum "$POM" | cut -d' ' -f1) $VERSION"
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; then
    log "reference Kafka $VERSION: in place"
    exit 0
fi

log "resolving the reference Kafka $VERSION (kafka_2.13, kafka-tools) from Maven Central into $DIR"
rm -rf "$DIR"
mkdir -p "$DIR"
# -C: fail on a checksum mismatch instead of warning
mvn -B -q -C -Dstyle.color=never -f "$POM" dependency:copy-dependencies -DoutputDirectory="$DIR" \
    -DincludeScope=runtime -Dkafka.version="$VERSION"

log "checking the reference Kafka $VERSION jars"
for name in "kafka_2.13-$VERSION" "kafka-tools-$VERSION" "kafka-clients-$VERSION"; do
    [[ -f "$DIR/$name.jar" ]] || die "$name.jar did not come with tests/reference/pom.xml"
done
found="$(jar_version "$DIR/kafka-clients-$VERSION.jar")"
[[ "$found" == "$VERSION" ]] || die "kafka-clients-$VERSION.jar says it is version '${found:-?}'"
echo "$want" > "$STAMP"
log "reference Kafka $VERSION ready in $DIR ($(find "$DIR" -name '*.jar' | wc -l) jars)"
