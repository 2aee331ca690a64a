"""Online upgrade and downgrade between classic and KIP-848 consumer groups, as Kafka 4 converts them.

Under `group.consumer.migration.policy`, a consumer-protocol member joining a classic group of protocol type
`consumer` converts it to a consumer group whose classic members keep using JoinGroup, SyncGroup, Heartbeat
and LeaveGroup (upgrade: ConsumerGroup.fromClassicGroup); when the last consumer-protocol member leaves or is
fenced, a group of only classic members converts back to a classic group (downgrade:
ClassicGroup.fromConsumerGroup). These functions decide and build; the group coordinator swaps the groups and
answers the members.
"""

from __future__ import annotations

from ..protocol.consumer_protocol import (
    CONSUMER_PROTOCOL_TYPE,
    decode_assignment,
    decode_subscription,
    encode_assignment,
)
from .classic_group import Group, GroupState, Member
from .config import BrokerConfig
from .consumer_groups import (
    ClassicMemberMetadata,
    ConsumerGroup,
    ConsumerGroupMember,
    MemberState,
    downgrade_enabled,
    upgrade_enabled,
)


def online_upgrade_refusal(classic: Group, config: BrokerConfig) -> str | None:
    """validateOnlineUpgrade and the conversion's parsing: None if the group may become a consumer group."""
    not_consumer = f"Group {classic.group_id} is not a consumer group"
    if not upgrade_enabled(config) or classic.protocol_type != CONSUMER_PROTOCOL_TYPE:
        return not_consumer
    if len(classic.members) > config["group.consumer.max.size"]:
        return not_consumer
    if classic.protocol_name is None:
        # no generation has chosen a protocol yet (Kafka would fail the conversion on the missing name)
        return not_consumer
    try:
        for member in classic.members.values():
            decode_subscription(member.metadata_for(classic.protocol_name))
    except ValueError:
        # Kafka says "Cannot upgrade the classic group X to consumer group because the embedded consumer
        # protocol is malformed." with the same code; we keep the plain refusal our earlier releases gave
        return not_consumer
    return None


def consumer_group_from_classic(classic: Group, now_ms: int) -> ConsumerGroup:
    """ConsumerGroup.fromClassicGroup: each member stable at the generation, owning its classic assignment."""
    group = ConsumerGroup(classic.group_id, state_timestamp_ms=now_ms)
    if not classic.members:
        return group
    group.group_epoch = group.assignment_epoch = classic.generation_id
    for old in classic.members.values():
        subscription = decode_subscription(old.metadata_for(classic.protocol_name))
        assigned = decode_assignment(old.assignment)
        member = ConsumerGroupMember(
            old.member_id, instance_id=old.group_instance_id, rack_id=getattr(subscription, "rack_id", None),
            client_id=old.client_id, client_host=old.client_host, rebalance_timeout_ms=old.rebalance_timeout_ms,
            subscribed_topic_names=sorted(subscription.topics or []), member_epoch=classic.generation_id,
            previous_member_epoch=classic.generation_id, state=MemberState.STABLE,
            session_deadline_ms=now_ms + old.session_timeout_ms,
            classic=ClassicMemberMetadata(old.session_timeout_ms, list(old.protocols)))
        group.members[member.member_id] = member
        if member.instance_id is not None:
            group.static_members[member.instance_id] = member.member_id
        # assigned and target alike keep it stable; a partition two members claim stays with the first
        free = {t: {p for p in ps if (t, p) not in group.owners} for t, ps in assigned.items()}
        member.assigned = {t: ps for t, ps in free.items() if ps}
        group.target[member.member_id] = {t: set(ps) for t, ps in member.assigned.items()}
        for tp in member.owned():
            group.owners[tp] = member.member_id
    return group


def may_downgrade(modern: ConsumerGroup, config: BrokerConfig) -> bool:
    """validateOnlineDowngrade*: only classic members left, the policy allows it, and they fit a classic group."""
    return (bool(modern.members) and len(modern.classic_members()) == len(modern.members)
            and downgrade_enabled(config) and len(modern.members) <= config["group.max.size"])


def classic_group_from_consumer(modern: ConsumerGroup, generation_id: int, now_ms: int) -> Group:
    """ClassicGroup.fromConsumerGroup: Stable at `generation_id`, each member holding its target assignment and
    a fresh session, the first member leading."""
    group = Group(modern.group_id, state=GroupState.STABLE, generation_id=generation_id,
                  protocol_type=CONSUMER_PROTOCOL_TYPE, state_timestamp_ms=now_ms)
    for old in modern.members.values():
        assert old.classic is not None
        member = Member(old.member_id, old.instance_id, old.client_id, old.client_host,
                        old.classic.session_timeout_ms, old.rebalance_timeout_ms, CONSUMER_PROTOCOL_TYPE,
                        list(old.classic.protocols),
                        assignment=encode_assignment(modern.target.get(old.member_id, {}), old.classic.protocols),
                        session_deadline_ms=now_ms + old.classic.session_timeout_ms)
        group.members[member.member_id] = member
        if member.group_instance_id is not None:
            group.static_members[member.group_instance_id] = member.member_id
    group.protocol_name = group.select_protocol()
    group.leader_id = next(iter(group.members))
    return group
