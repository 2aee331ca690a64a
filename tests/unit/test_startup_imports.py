"""A broker starts on what it needs (issue 27): message classes and handler modules load on first use.

`minibroker serve` imports the command line and the server before it listens; neither may import every API's
handler module or create every API's message classes (each compiles a JSON definition: about half of what the
start took), nor the test-control code without `--fault`. What loads later must be what loaded before: every
API key's classes and declarations, the same objects as kafka-python's own, without DeprecationWarnings.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import minibroker.protocol.messages as messages
from minibroker.apis import API_DECLARATIONS, API_MODULES, ApiDeclaration, _declared_in_source
from minibroker.protocol.messages import API_NAMES, REQUESTS, RESPONSES


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", code], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


SERVE_IMPORTS = """
import json, sys
import minibroker.cli, minibroker.server.broker
print(json.dumps(sorted(sys.modules)))
"""


def test_serve_imports_no_handler_module_but_api_versions_no_message_class_it_does_not_use_and_no_tls() -> None:
    loaded = set(json.loads(_run(SERVE_IMPORTS)))
    handlers = {module.__name__ for module in API_MODULES.values()}
    assert loaded & handlers == {"minibroker.apis.api_versions"}
    # of kafka-python's message modules, ApiVersions' (which answers first) and the consumer protocol's
    assert {module for module in loaded if module.startswith(("kafka.protocol.admin.", "kafka.protocol.consumer.",
                                                               "kafka.protocol.metadata.", "kafka.protocol.producer."))
            } == {"kafka.protocol.consumer.metadata", "kafka.protocol.metadata.api_versions"}
    assert "kafka.admin" not in loaded and "kafka.consumer" not in loaded  # nor kafka-python's client
    assert not {module for module in loaded if module.startswith("minibroker.testing")}
    # TLS's keystores need cryptography (60 ms, 8 MB): only a TLS listener or a principal mapping rule loads it
    assert "minibroker.server.tls" not in loaded and "cryptography" not in loaded


def test_serve_imports_no_sasl_mechanism_principal_mapping_or_compression_library() -> None:
    loaded = set(json.loads(_run(SERVE_IMPORTS)))
    # a PLAINTEXT broker needs no SASL (its SaslAuthenticator comes with the first SASL listener's factory), no
    # TLS principal mapping and no codec library (the first compressed batch imports its codec's)
    assert not loaded & {"minibroker.server.authenticator", "minibroker.server.sasl.mechanism",
                         "minibroker.server.tls_principal", "cramjam", "lz4", "lz4.frame", "zstandard"}
    # nor the group coordinator (classic, consumer and streams groups, google-re2) or the SCRAM credentials: the
    # Cluster builds them on first use
    assert not loaded & {"minibroker.core.group_coordinator", "minibroker.core.classic_coordinator",
                         "minibroker.core.streams_groups", "minibroker.core.credentials", "re2"}
    assert "minibroker.core.fetch_sessions" not in loaded  # the first Fetch's


def test_serve_and_its_ready_line_search_no_installed_distribution() -> None:
    # importlib.metadata (with email, zipfile, csv: about 60 ms) came with crc32c, which read its own version
    # through it, and with the ready line's version; the CRC-32C of batches and the version need neither
    loaded = json.loads(_run("import json, sys\nimport minibroker.cli, minibroker.server.broker\n"
                             "from minibroker.protocol.records import compute_crc\n"
                             "assert minibroker.cli.version() == minibroker.__version__\n"
                             "assert compute_crc(bytes(21) + b'123456789') == 0xE3069283  # CRC-32C's check value\n"
                             "print(json.dumps(sorted(sys.modules)))"))
    assert "importlib.metadata" not in loaded and "email" not in loaded


def test_compression_imports_its_codec_library_on_first_use() -> None:
    out = _run("import sys\n"
               "from minibroker.protocol import compression as c\n"
               "before = [m in sys.modules for m in ('cramjam', 'lz4', 'zstandard')]\n"
               "assert c.decompress(c.COMPRESSION_GZIP, c.compress(c.COMPRESSION_GZIP, b'x' * 100)) == b'x' * 100\n"
               "assert c.decompress(c.COMPRESSION_LZ4, c.kafka_lz4_frame(b'y' * 100)) == b'y' * 100\n"
               "print(before, 'cramjam' in sys.modules, 'lz4.frame' in sys.modules)")
    assert out.strip() == "[False, False, False] True True"


def test_python_m_minibroker_collects_cycles_once_loaded_and_leaves_what_it_loaded_out() -> None:
    out = _run("import atexit, gc, runpy, sys\n"
               "sys.argv = ['minibroker', '--help']\n"
               "atexit.register(lambda: print(gc.isenabled(), gc.get_freeze_count() > 10_000))\n"
               "runpy.run_module('minibroker', run_name='__main__')")
    assert out.split()[-2:] == ["True", "True"]


def test_test_control_names_the_apis_without_importing_their_handlers() -> None:
    # the pytest plugin and every test process import test control; naming the APIs by importing all 59 handler
    # modules (and their message classes) took about 150 ms of each
    out = _run("import sys\n"
               "from minibroker.testing.control import API_KEYS\n"
               "from minibroker.apis import API_MODULES\n"
               "print(API_KEYS['produce'], API_KEYS['describe_acls'], 'minibroker.apis.describe_acls' in sys.modules,"
               " sorted(API_KEYS) == sorted(m.__name__.rsplit('.', 1)[1] for m in API_MODULES.values()))")
    assert out.split() == ["0", "29", "False", "True"]


def test_a_handler_module_is_imported_on_its_first_lookup() -> None:
    out = _run("import sys, minibroker.apis as apis\n"
               "before = 'minibroker.apis.create_topics' in sys.modules\n"
               "module = apis.API_MODULES[19]\n"
               "print(before, module.__name__, 'minibroker.apis.create_topics' in sys.modules,"
               " 'kafka.protocol.admin.topics' in sys.modules)")
    assert out.split() == ["False", "minibroker.apis.create_topics", "True", "True"]


def test_the_declarations_read_from_the_sources_are_the_modules_own() -> None:
    assert set(API_DECLARATIONS) == set(API_MODULES) == set(API_NAMES)
    for key, declaration in API_DECLARATIONS.items():
        assert declaration == ApiDeclaration.of(API_MODULES[key]), key


def test_a_declaration_not_written_as_literals_is_read_from_the_imported_module() -> None:
    source = b'"""Produce."""\nAPI_KEY = 0\nMIN_VERSION, MAX_VERSION = 3, LATEST\nADVERTISED_MIN_VERSION = 0\n'
    declaration = _declared_in_source("minibroker.apis.produce", source)
    assert declaration == ApiDeclaration.of(API_MODULES[0])
    twice = b"API_KEY = 0\nMIN_VERSION, MAX_VERSION = 1, 2\nMAX_VERSION = 9\n"
    assert _declared_in_source("minibroker.apis.produce", twice).max_version == API_MODULES[0].MAX_VERSION


@pytest.mark.parametrize("key", sorted(API_NAMES))
def test_each_api_key_has_its_request_and_response_class(key: int) -> None:
    request, response = REQUESTS[key], RESPONSES[key]
    assert request.API_KEY == response.API_KEY == key
    assert (request.__name__, response.__name__) == (f"{API_NAMES[key]}Request", f"{API_NAMES[key]}Response")
    assert getattr(messages, request.__name__) is request and getattr(messages, response.__name__) is response
    assert request.is_request() and not response.is_request()


def test_kafka_pythons_classes_are_its_own_and_ours_extend_theirs() -> None:
    import kafka.protocol.admin
    import kafka.protocol.producer

    assert messages.CreateTopicsRequest is kafka.protocol.admin.CreateTopicsRequest
    assert messages.InitProducerIdResponse is kafka.protocol.producer.InitProducerIdResponse
    assert messages.ProduceRequest.__module__ == messages.__name__
    assert messages.ProduceRequest.max_version == 14
    assert not messages.ProduceRequest(acks=0).expect_response() and messages.ProduceRequest(acks=-1).expect_response()
    with pytest.raises(AttributeError):
        messages.NoSuchRequest  # noqa: B018


def test_creating_every_class_on_first_use_warns_nothing() -> None:
    out = _run("from minibroker.protocol.messages import REQUESTS, RESPONSES\n"
               "print(len([*REQUESTS.values(), *RESPONSES.values()]))")
    assert int(out) == 2 * len(API_NAMES)
