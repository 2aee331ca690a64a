# Shared by the install scripts (sourced): one-line progress messages, failing with a reason, and reading the
# version a kafka-clients jar says it is.

log() { echo "install-test-deps: $*" >&2; }
die() { log "$*"; exit 1; }

# jar_version JAR: the version a kafka-clients jar says it is (python3's zipfile: unzip may not be installed)
jar_version() {
    python3 -c 'import sys, zipfile; props = zipfile.ZipFile(sys.argv[1]).read("kafka/kafka-version.properties")
print(next((l.split("=", 1)[1] for l in props.decode().splitlines() if l.startswith("version=")), "?"))' "$1" \
        2>/dev/null || echo "?"
}
