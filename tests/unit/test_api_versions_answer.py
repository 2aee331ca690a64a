"""ApiVersions answers are built once per (release, version, feature state) and then sent as stored bytes: the
bytes must still say what the node's release and the cluster's feature levels say, request after request, for
every release and version, and change as soon as UpdateFeatures changes the levels."""

from __future__ import annotations

import struct

import pytest

from minibroker.apis import advertised_ranges, api_versions
from minibroker.apis.dispatch import Reply, handle_frame
from minibroker.apis.feature_levels import feature_levels
from minibroker.apis.releases import RELEASES
from minibroker.core.cluster import Cluster
from minibroker.core.cluster_model import Node
from minibroker.protocol.messages import ApiVersionsResponse

UPGRADE = 1


def api_versions_frame(version: int, correlation_id: int) -> bytes:
    """An ApiVersions request as librdkafka sends it (header v2 from v3, with its software name and version)."""
    client_id = b"rdkafka"
    header = struct.pack(">hhih", 18, version, correlation_id, len(client_id)) + client_id
    if version < 3:
        return header
    return header + b"\x00" + b"\x0blibrdkafka" + b"\x072.16.0" + b"\x00"


def answer(cluster: Cluster, version: int, correlation_id: int = 7) -> tuple[int, ApiVersionsResponse]:
    """The correlation id and the decoded body of the node's answer (ApiVersions answers with a v0 header)."""
    outcome = handle_frame(memoryview(api_versions_frame(version, correlation_id)), cluster, cluster.nodes[0])
    assert isinstance(outcome, Reply) and isinstance(outcome.data, bytes)
    size, correlation = struct.unpack_from(">ii", outcome.data)
    assert size == len(outcome.data) - 4
    return correlation, ApiVersionsResponse.decode(outcome.data[8:], version=version)


def cluster_of(release_name: str) -> Cluster:
    return Cluster(nodes=[Node(0, "127.0.0.1", 9092, release=release_name)])


@pytest.mark.parametrize("release_name", sorted(RELEASES))
@pytest.mark.parametrize("version", range(5))
def test_every_answer_says_what_its_release_serves(release_name: str, version: int) -> None:
    cluster = cluster_of(release_name)
    highest = next(high for key, _low, high in advertised_ranges(release_name) if key == 18)
    if version > highest:  # the KIP-511 fallback, a v0 body with UNSUPPORTED_VERSION: not stored
        outcome = handle_frame(memoryview(api_versions_frame(version, 1)), cluster, cluster.nodes[0])
        assert isinstance(outcome, Reply) and isinstance(outcome.data, bytes)
        assert ApiVersionsResponse.decode(outcome.data[8:], version=0).error_code == 35
        return
    for correlation_id in (1, 2, 3):  # the second and third come from the stored bytes
        correlation, body = answer(cluster, version, correlation_id)
        assert correlation == correlation_id
        assert body.error_code == 0
        assert [(k.api_key, k.min_version, k.max_version) for k in body.api_keys] == advertised_ranges(release_name)
        if version >= 3:
            finalized = feature_levels(cluster).finalized()
            assert [(f.name, f.max_version_level) for f in body.finalized_features] == list(finalized)


def test_an_update_of_the_feature_levels_changes_the_next_answer() -> None:
    cluster = cluster_of("latest")
    _, before = answer(cluster, 4)
    levels = dict((f.name, f.max_version_level) for f in before.finalized_features)
    assert levels["transaction.version"] == 2
    feature_levels(cluster).update([("transaction.version", 1, 2)])  # SAFE_DOWNGRADE
    _, after = answer(cluster, 4)
    assert after.finalized_features_epoch == before.finalized_features_epoch + 1
    assert dict((f.name, f.max_version_level) for f in after.finalized_features)["transaction.version"] == 1
    # another cluster in the same process (an in-process fixture beside another) keeps its own levels
    _, other = answer(cluster_of("latest"), 4)
    assert dict((f.name, f.max_version_level) for f in other.finalized_features)["transaction.version"] == 2
    assert other.finalized_features_epoch == before.finalized_features_epoch


def test_a_refused_software_name_is_answered_as_before() -> None:
    frame = struct.pack(">hhih", 18, 3, 5, 0) + b"\x00" + b"\x02!" + b"\x072.16.0" + b"\x00"
    cluster = cluster_of("latest")
    outcome = handle_frame(memoryview(frame), cluster, cluster.nodes[0])
    assert isinstance(outcome, Reply) and isinstance(outcome.data, bytes)
    # INVALID_REQUEST (42), no API keys (an empty compact array), throttle 0, no tagged fields
    assert outcome.data[8:] == b"\x00\x2a" + b"\x01" + b"\x00\x00\x00\x00" + b"\x00"


def test_an_answer_is_encoded_once_and_then_sent_as_stored(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every connection opens with ApiVersions: building and encoding its 60-odd entries each time cost about
    0.8 ms on this project's 2-core machine, enough for librdkafka's first idempotent producer to miss its PID
    and wait out a 500 ms timer."""
    encoded = []
    engine_encode = ApiVersionsResponse.encode

    def counting_encode(self: ApiVersionsResponse, *args: object, **kwargs: object) -> bytes:
        encoded.append(kwargs.get("version"))
        return bytes(engine_encode(self, *args, **kwargs))

    monkeypatch.setattr(ApiVersionsResponse, "encode", counting_encode)
    for stored in ("_answers", "_by_identity"):  # start with nothing stored, whatever ran before
        monkeypatch.setattr(api_versions, stored, {}, raising=False)
    cluster = Cluster(nodes=[Node(0, "127.0.0.1", 9092, release="4.1")])
    first = [answer(cluster, 3, correlation_id) for correlation_id in range(5)]
    assert encoded == [3]
    assert [correlation for correlation, _ in first] == list(range(5))
