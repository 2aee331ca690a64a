"""The install step that `make test` runs: every dependency from the project's own pinned files, a line per step.

scripts/install-test-deps.sh ran before the suite (`make test`), so here a second run must be a no-op that
still says what each step is; the Go modules resolve offline at their pinned versions, and each Java client set's
jars are the pinned release.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.integration.clients import JAVA_CURRENT, JAVA_OLD, java_lib, missing

ROOT = Path(__file__).resolve().parents[2]
GO_DIR = ROOT / "tests" / "clients" / "go"


def test_a_second_install_run_is_a_no_op_that_names_each_step():
    if shutil.which("go") is None or shutil.which("mvn") is None:
        missing("go or mvn")
    run = subprocess.run(["bash", str(ROOT / "scripts" / "install-test-deps.sh")], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr
    lines = run.stderr.splitlines()
    assert all(line.startswith("install-test-deps: ") for line in lines), lines
    said = "\n".join(lines)
    for step in ("KafkaJS: in place", "Java client jars 4.3: in place", "Java client jars 3.9: in place",
                 "Go modules of tests/clients/go/old", "Go modules of tests/clients/go/current",
                 "reference Kafka 4.3.1: in place"):
        assert step in said, said
    assert "apt-get" not in said and "resolving" not in said  # nothing was installed a second time
    assert lines[-1] == "install-test-deps: done"


@pytest.mark.parametrize(("module", "pins"), [
    ("old", {"github.com/Shopify/sarama": "v1.22.1", "github.com/segmentio/kafka-go": "v0.2.1"}),
    ("current", {"github.com/IBM/sarama": "v1.61.1", "github.com/segmentio/kafka-go": "v0.4.51"}),
])
def test_go_clients_resolve_offline_at_their_pinned_versions(module, pins):
    go = shutil.which("go")
    if go is None:
        missing("the go toolchain")
    # the modules the programs are built from, as the tests build them: offline, go.mod and go.sum unchanged
    listed = subprocess.run([go, "list", "-deps", "-f", "{{with .Module}}{{.Path}} {{.Version}}{{end}}", "./..."],
                            cwd=GO_DIR / module, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "GOFLAGS": "-mod=readonly", "GOPROXY": "off"})
    assert listed.returncode == 0, listed.stderr
    versions = dict(line.split() for line in listed.stdout.splitlines() if len(line.split()) == 2)
    assert {name: versions.get(name) for name in pins} == pins


@pytest.mark.parametrize(("version", "pom", "release", "artifacts"), [
    (JAVA_CURRENT, "pom.xml", "4.3.1", ("kafka-clients", "kafka-streams")),
    (JAVA_OLD, "3.9/pom.xml", "3.9.1", ("kafka-clients",)),
])
def test_each_java_client_set_is_its_pinned_release(version, pom, release, artifacts):
    jar = java_lib(version) / "kafka-clients.jar"
    if not jar.is_file():
        missing(str(jar))
    properties = zipfile.ZipFile(jar).read("kafka/kafka-version.properties").decode()
    assert f"version={release}" in properties.splitlines()
    # every Apache Kafka artifact of the set (kafka-streams too) is pinned to that same release
    pom_text = (ROOT / "tests" / "clients" / "java" / pom).read_text()
    for artifact in artifacts:
        assert f"<artifactId>{artifact}</artifactId>\n      <version>{release}</version>" in pom_text
        assert (java_lib(version) / f"{artifact}.jar").is_file()
