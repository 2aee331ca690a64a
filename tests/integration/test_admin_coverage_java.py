"""The 4.x Java Admin client's calls that minibroker serves, against minibroker and against Apache Kafka (issue 25).

tests/clients/java/v4/AdminCoverage.java runs one fixed sequence of Admin calls (topics, partitions, configs,
deleteRecords, listOffsets, consumer groups, transactions, ACLs, SCRAM users, describeCluster, log dirs,
electLeaders, reassignments; not features) and prints, per call, success with a result free of ids, or the
exception's class and message. Against minibroker with an authorizer, every outcome is Kafka's (EXPECTED, as
Kafka 4.3.1 answered); against the reference Kafka, the two runs are compared call by call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from minibroker.core.acls import STANDARD_AUTHORIZER
from minibroker.testing.process import BrokerProcess, start_broker
from tests.helpers import unique_topic
from tests.integration.clients import JavaClients

pytestmark = [pytest.mark.java, pytest.mark.timeout(900)]

#: Authorization on, with the anonymous PLAINTEXT client a super user (as the test run's reference Kafka has it).
AUTHORIZER = (f"authorizer.class.name={STANDARD_AUTHORIZER}", "super.users=User:ANONYMOUS")

#: Where minibroker differs from Kafka on purpose: call -> (minibroker's error class, reason).
DIVERGENCES = {
    "abortTransaction": ("UnsupportedVersionException",
                         "Admin.abortTransaction sends WriteTxnMarkers to the partition leader, a broker-to-broker API "
                         "minibroker does not serve (README 'What minibroker does not do'; tests/differential/"
                         "ledger.json, api_versions api_key=27)"),
}

#: Each call's outcome as Apache Kafka 4.3.1 answered it (an authorizer on, P standing for the run's prefix):
#: True for success, else the exception class.
EXPECTED: dict[str, bool | str] = {
    "describeCluster": True, "createTopics": True, "createTopics.again": "TopicExistsException",
    "listTopics": True, "describeTopics": True, "createPartitions": True,
    "createPartitions.fewer": "InvalidPartitionsException",
    "describeTopics.unknown": "UnknownTopicOrPartitionException",
    "describeConfigs": True, "incrementalAlterConfigs": True,
    "incrementalAlterConfigs.invalid": "InvalidConfigurationException", "produce": True, "listOffsets": True,
    "deleteRecords": True, "deleteRecords.beyond": "OffsetOutOfRangeException", "consumer.commit": True,
    "listGroups": True, "listConsumerGroups": True, "describeConsumerGroups": True, "listConsumerGroupOffsets": True,
    "alterConsumerGroupOffsets": True, "deleteConsumerGroupOffsets": True, "deleteConsumerGroups": True,
    "describeConsumerGroups.deleted": "GroupIdNotFoundException",
    "deleteConsumerGroups.unknown": "GroupIdNotFoundException", "transaction.open": True, "listTransactions": True,
    "describeTransactions": True, "describeProducers": True, "abortTransaction": True, "fenceProducers": True,
    "describeTransactions.unknown": "TransactionalIdNotFoundException", "createAcls": True, "describeAcls": True,
    "deleteAcls": True, "describeAcls.after": True, "alterUserScramCredentials.upsert": True,
    "alterUserScramCredentials.weak": "UnacceptableCredentialException", "alterUserScramCredentials.delete": True,
    "describeUserScramCredentials.deleted": "ResourceNotFoundException", "describeLogDirs": True,
    "describeReplicaLogDirs": True, "electLeaders": True, "alterPartitionReassignments": True,
    "alterPartitionReassignments.unknownBroker": "InvalidReplicaAssignmentException",
    "alterPartitionReassignments.cancelNone": "NoReassignmentInProgressException",
    "listPartitionReassignments": True, "deleteTopics": True, "deleteTopics.again": "UnknownTopicOrPartitionException",
}


@pytest.fixture
def authorized_broker() -> Iterator[BrokerProcess]:
    process = start_broker(*AUTHORIZER, timeout=180)  # generous: a loaded machine starts it slowly
    yield process
    process.stop()


def coverage(java: JavaClients, target: Any) -> dict[str, dict[str, Any]]:
    """AdminCoverage's outcome per call against `target`, its name prefix replaced by P."""
    prefix = unique_topic("admin-cov")
    run = java.run(target, "AdminCoverage", prefix, timeout=600).check()
    outcomes = {}
    for line in run.lines():
        line = json.loads(re.sub(re.escape(prefix), "P", json.dumps(line)))
        outcomes[line.pop("call")] = line
    assert list(outcomes) == list(EXPECTED), run.describe()
    return outcomes


def kind(outcome: dict[str, Any]) -> bool | str:
    return True if outcome["ok"] else outcome["error"]


def test_every_admin_call_has_kafkas_outcome_on_minibroker(java, authorized_broker):
    outcomes = coverage(java, authorized_broker)
    got = {call: kind(outcome) for call, outcome in outcomes.items()}
    want = {call: DIVERGENCES[call][0] if call in DIVERGENCES else outcome for call, outcome in EXPECTED.items()}
    assert got == want
    # a few results, as Kafka gives them
    assert outcomes["listOffsets"]["result"] == {"earliest": 0, "latest": 10, "max_timestamp": 9, "for_timestamp": 4}
    assert outcomes["deleteRecords"]["result"] == {"low_watermark": 4, "earliest": 4}
    assert outcomes["deleteConsumerGroupOffsets"]["result"] == {"P-topic-0": 5}
    assert outcomes["describeTransactions"]["result"]["partitions"] == ["P-topic-1"]
    assert outcomes["describeAcls"]["result"] == outcomes["deleteAcls"]["result"] == {
        "acls": ["User:P-user READ ALLOW"]}
    assert outcomes["describeAcls.after"]["result"] == {"acls": []}
    assert outcomes["electLeaders"]["result"] == {"p0": "ElectionNotNeededException"}


@pytest.mark.reference
def test_every_admin_call_matches_the_reference_kafka(java, kafka_reference):
    kafka = coverage(java, kafka_reference)
    # the reference of the test run has an authorizer (REFERENCE_CONFIG); one started by hand may not
    authorized = kafka["createAcls"]["ok"]
    broker = start_broker(*(AUTHORIZER if authorized else ()), timeout=180)
    try:
        ours = coverage(java, broker)
    finally:
        broker.stop()
    for call in DIVERGENCES:
        assert kind(ours.pop(call)) == DIVERGENCES[call][0]
        kafka.pop(call)
    assert ours == kafka  # success and result, or exception class and message, call by call
