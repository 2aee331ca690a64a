"""A running broker: the core plus one listener per node. Embeddable in tests."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..apis.dispatch import Answer
from ..apis.feature_levels import new_feature_levels
from ..apis.releases import LATEST, release
from ..core.clock import Clock
from ..core.cluster import Cluster
from ..core.cluster_model import Endpoint, Node
from ..core.config import KIP1269_CONFIGS, BrokerConfig, ConfigError
from ..protocol.security_protocol import uses_sasl, uses_tls
from .acceptor import Acceptor, listening_sockets
from .adapter import READ_BUFFER_SIZE, ConnectionAdapter, Listener
from .connection import RequestHook
from .quotas import ConnectionQuotas, RequestMemory

if TYPE_CHECKING:
    from .adapter import AuthenticatorFactory
    from .authenticator import SaslAuthenticator

log = logging.getLogger("minibroker")

TICK_INTERVAL_S = 0.1  # session and rebalance deadlines are checked this often

WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})  # bind addresses meaning "every interface"


def advertised_host_for(bind_host: str, advertised_host: str | None = None) -> str:
    """The host Metadata tells clients for a listener bound to `bind_host`: `advertised_host` if given,
    `localhost` for a wildcard bind address (no client can dial 0.0.0.0), else `bind_host` itself.

    Kafka advertises the canonical host name for a listener with an empty host. We choose localhost because
    it is what works with port mapping (`docker run -p 9092:9092`): from the host, the container's host name
    does not resolve, while localhost reaches the published port.
    """
    if advertised_host:
        return advertised_host
    return "localhost" if bind_host in WILDCARD_HOSTS else bind_host


def cluster_config(config: dict[str, Any] | None, controller_release: str) -> BrokerConfig:
    """The broker configs as the controller's release knows them (its release's configs; older releases lack
    KIP-1269's)."""
    profile = release(controller_release)
    unknown = frozenset() if profile.kip1269 else KIP1269_CONFIGS
    elr = dict(profile.features.finalized).get("eligible.leader.replicas.version", 0) >= 1
    # raises ConfigError on a bad or unknown config
    return BrokerConfig(config, unknown, elr, profile=controller_release)


# the `ssl.*` configs server/tls.py reads (DefaultSslEngineFactory's)
TLS_CONFIGS = (
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
    "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.truststore.type", "ssl.truststore.location",
    "ssl.truststore.password", "ssl.truststore.certificates", "ssl.client.auth", "ssl.enabled.protocols",
    "ssl.cipher.suites",
)


def tls_context(config: BrokerConfig, endpoint: Endpoint) -> ssl.SSLContext:
    """The TLS context of an SSL or SASL_SSL listener from its `ssl.*` configs (listener overrides first)."""
    from .tls import TlsConfigError, server_ssl_context  # here: it imports cryptography (60 ms, 8 MB)

    values = {name: config.listener_value(endpoint.listener, name) for name in TLS_CONFIGS}
    prefixed = config.listener_static.get(endpoint.listener.lower(), {})
    if endpoint.security_protocol == "SASL_SSL" and "ssl.client.auth" not in prefixed:
        # Kafka's ChannelBuilders: on SASL_SSL only a listener-prefixed ssl.client.auth applies
        values["ssl.client.auth"] = "none"
    try:
        return server_ssl_context(values)
    except TlsConfigError as exc:
        raise ConfigError(f"listener {endpoint.listener}: {exc}") from None


def sasl_authenticator_factory(cluster: Cluster, endpoint: Endpoint) -> AuthenticatorFactory:
    """What each connection of a SASL listener authenticates with; ConfigError where Kafka would not start.

    Mechanisms from `sasl.enabled.mechanisms`; each needs its JAAS entry in
    `listener.name.<listener>.<mechanism>.sasl.jaas.config` (JaasContext.loadServerContext), which for PLAIN
    names the users (`user_alice="secret"`) and for OAUTHBEARER holds the unsecured validator's options.
    """
    # SASL's modules (and the SCRAM credentials') load only for a SASL listener, not with every broker
    from ..protocol.jaas import load_server_jaas
    from .authenticator import SaslAuthenticator
    from .sasl.mechanism import SUPPORTED_MECHANISMS, SaslServerConfig

    config = cluster.config
    listener = endpoint.listener
    mechanisms = [str(m) for m in config.listener_value(listener, "sasl.enabled.mechanisms")]
    unsupported = [m for m in mechanisms if m not in SUPPORTED_MECHANISMS]
    if unsupported or not mechanisms:
        raise ConfigError(f"minibroker does not implement the SASL mechanism(s) {', '.join(unsupported) or 'none'} "
                          f"enabled on listener {listener}: set sasl.enabled.mechanisms to some of "
                          f"{', '.join(SUPPORTED_MECHANISMS)}")
    jaas: dict[str, str] = {}
    overrides = config.listener_static.get(listener.lower(), {})
    for mechanism in mechanisms:
        text = overrides.get(f"{mechanism.lower()}.sasl.jaas.config")
        if text is None:
            raise ConfigError(f"Could not find a 'KafkaServer' or '{listener.lower()}.KafkaServer' entry in the JAAS "
                              f"configuration for SASL mechanism {mechanism}: set listener.name.{listener.lower()}."
                              f"{mechanism.lower()}.sasl.jaas.config")
        jaas[mechanism] = str(text)
    try:
        credentials = cluster.credentials.for_listener(jaas.get("PLAIN"))
        options = load_server_jaas(jaas["OAUTHBEARER"]).options if "OAUTHBEARER" in jaas else {}
        for text in jaas.values():
            load_server_jaas(text)
        sasl_config = SaslServerConfig(oauthbearer_options=options, clock=cluster.clock)
        if "OAUTHBEARER" in jaas:
            sasl_config.validator_options()
    except ValueError as exc:  # JaasConfigError, OAuthBearerConfigError
        raise ConfigError(f"listener {listener}: {exc}") from None
    max_reauth_ms = int(config.listener_value(listener, "connections.max.reauth.ms"))

    def new_authenticator(api_versions: Callable[[memoryview], Answer]) -> SaslAuthenticator:
        return SaslAuthenticator(mechanisms, credentials, sasl_config, cluster.clock.now_ms, max_reauth_ms,
                                 api_versions)

    return new_authenticator


class Broker:
    """A minibroker instance; many may run in one process.

    >>> broker = Broker(port=0, config={"num.partitions": "3"})
    >>> await broker.start(); print(broker.bootstrap_servers); await broker.stop()
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 9092,
        config: dict[str, Any] | None = None,
        clock: Clock | None = None,
        nodes: int = 1,
        ports: list[int] | None = None,
        advertised_listeners: list[tuple[str, int]] | None = None,
        as_version: str = LATEST,
        node_releases: dict[int, str] | None = None,
        advertised_host: str | None = None,
        features: dict[str, int] | None = None,
    ) -> None:
        """`nodes` simulated nodes listen on `ports`, or on consecutive ports from `port` (all free ones if 0).

        `advertised_listeners` gives each node the (host, port) clients are told to use, e.g. a proxy; without
        them every node advertises `advertised_host` (default: see `advertised_host_for`) and its own port.
        `as_version` makes every node speak as that Kafka release, `node_releases` (node id -> release)
        overrides it per node; see apis/releases.py. `features` (name -> level) sets initial finalized feature
        levels as `kafka-storage format --feature` does (ValueError with Kafka's message for a bad one).
        Test control registers on `request_hook` (`Control.attach(broker)`, minibroker/testing/control.py).
        """
        self.host = host
        self.port = port
        # raises ConfigError on a bad config, listeners included; the release's configs (cluster_config below
        # checks them again with the first node's own profile)
        broker_config = BrokerConfig(config, profile=as_version)
        if ports is None:
            ports = [port + i if port else 0 for i in range(nodes)]
        if not ports:
            raise ValueError("a cluster needs at least one node")
        if advertised_listeners is not None and len(advertised_listeners) != len(ports):
            raise ValueError(f"{len(advertised_listeners)} advertised listeners for {len(ports)} nodes")
        if advertised_listeners is not None and broker_config.listeners:
            raise ValueError("--advertised-listeners gives the address of the --host/--port listener; with "
                             "listeners set, use advertised.listeners")
        if advertised_listeners is not None and broker_config.advertised:
            raise ValueError("--advertised-listeners and advertised.listeners both give the advertised address: "
                             "use one")
        host_for_clients = advertised_host_for(host, advertised_host)
        # said once at start(): only when the wildcard rule chose the advertised host
        self._wildcard_note = advertised_listeners is None and host_for_clients != host and not advertised_host
        # endpoints whose advertised port is the one bound at start (port 0 asks for any free one)
        self._follow_bound_port: set[tuple[int, str]] = set()
        cluster_nodes = []
        for i, node_port in enumerate(ports):
            node_id = broker_config.node_id + i
            if broker_config.listeners:  # `listeners` (and `advertised.listeners`) in the config
                endpoints = self._configured_endpoints(broker_config, i, node_id, advertised_host)
            else:  # --host/--port: one PLAINTEXT listener, which `advertised.listeners` may name (Kafka's default)
                told = broker_config.advertised[0] if broker_config.advertised else None
                if advertised_listeners is not None:
                    advertised = advertised_listeners[i]
                elif told is not None and told.port:
                    advertised = (told.host or host_for_clients, told.port + i)
                else:
                    advertised = (told.host if told is not None and told.host else host_for_clients, node_port)
                    self._follow_bound_port.add((node_id, "PLAINTEXT"))
                endpoints = [Endpoint("PLAINTEXT", "PLAINTEXT", advertised[0], advertised[1], host, node_port)]
            first = endpoints[0]
            cluster_nodes.append(Node(node_id, first.host, first.port, bind_host=first.bind_host,
                                      bind_port=first.bind_port, endpoints=endpoints))
        node_releases = node_releases or {}
        for name in {as_version, *node_releases.values()}:
            release(name)  # ValueError for an unknown release
        strangers = set(node_releases) - {node.node_id for node in cluster_nodes}
        if strangers:
            raise ValueError(f"node profile for unknown node id(s) {sorted(strangers)}")
        for node in cluster_nodes:
            node.release = node_releases.get(node.node_id, as_version)
        self.cluster = Cluster(cluster_config(config, cluster_nodes[0].release), clock, nodes=cluster_nodes)
        self.cluster.features = new_feature_levels(self.cluster, features)
        self._acceptors: list[Acceptor] = []
        self._ticker: asyncio.Task[None] | None = None
        self._listeners: list[Listener] = []
        self._request_hook: RequestHook | None = None
        # per listener name, built now: a bad keystore or SASL setting refuses to start, as in Kafka
        self._tls = {endpoint.listener: tls_context(self.cluster.config, endpoint)
                     for endpoint in cluster_nodes[0].endpoints if uses_tls(endpoint.security_protocol)}
        self._sasl = {endpoint.listener: sasl_authenticator_factory(self.cluster, endpoint)
                      for endpoint in cluster_nodes[0].endpoints if uses_sasl(endpoint.security_protocol)}

    def _configured_endpoints(self, config: BrokerConfig, index: int, node_id: int,
                              advertised_host: str | None) -> list[Endpoint]:
        """Node `index`'s endpoints from `listeners`/`advertised.listeners`: ports shift by the node's index."""
        advertised = {spec.name: spec for spec in config.advertised}
        endpoints = []
        for spec in config.listeners:
            bind_port = spec.port + index if spec.port else 0
            told = advertised.get(spec.name)
            if told is not None and told.port:
                host, port = told.host or advertised_host_for(spec.host, advertised_host), told.port + index
            else:
                host, port = advertised_host_for(spec.host, advertised_host), bind_port
                self._follow_bound_port.add((node_id, spec.name))
            endpoints.append(Endpoint(spec.name, spec.security_protocol, host, port, spec.host, bind_port))
        return endpoints

    @property
    def connections(self) -> list[ConnectionAdapter]:
        """The open client connections of every node."""
        return [connection for listener in self._listeners for connection in listener.connections]

    @property
    def request_hook(self) -> RequestHook | None:
        """The observer told about every request (test control); see `server.connection.RequestHook`."""
        return self._request_hook

    @request_hook.setter
    def request_hook(self, hook: RequestHook | None) -> None:
        self._request_hook = hook
        for listener in self._listeners:
            listener.hook = hook
            for connection in listener.connections:
                connection.state.hook = hook

    @property
    def bootstrap_servers(self) -> str:
        """The advertised addresses of all nodes."""
        return ",".join(f"{n.host}:{n.port}" for n in self.cluster.nodes)

    def listeners(self) -> list[dict[str, Any]]:
        """Each node's bind and advertised address, as the ready signal of `minibroker serve` gives them.

        The first listener's at the top level of each entry; with several, all of them under "listeners".
        """
        described = []
        for n in self.cluster.nodes:
            entry: dict[str, Any] = {"node_id": n.node_id, "host": n.bind_host, "port": n.bind_port,
                                     "advertised_host": n.host, "advertised_port": n.port}
            if len(n.endpoints) > 1:
                entry["listeners"] = [{"name": e.listener, "security_protocol": e.security_protocol,
                                       "host": e.bind_host, "port": e.bind_port, "advertised_host": e.host,
                                       "advertised_port": e.port} for e in n.endpoints]
            described.append(entry)
        return described

    async def start(self) -> None:
        """Bind every node's listener and start the clock ticks."""
        # every connection of this broker reads into one buffer: they all run on this loop, and each
        # takes its frames from it before the next read (see ConnectionAdapter)
        read_buffer = bytearray(READ_BUFFER_SIZE)
        for node in self.cluster.nodes:
            # quotas and request memory per node, as each Kafka broker's SocketServer has its own
            quotas = ConnectionQuotas(self.cluster.config)
            request_memory = RequestMemory(self.cluster.config["queued.max.request.bytes"])
            for endpoint in node.endpoints:
                context = self._tls.get(endpoint.listener)
                config = self.cluster.config
                listener = Listener(self.cluster, node, read_buffer, endpoint=endpoint, ssl_context=context,
                                    principal_mapping_rules=config.listener_value(endpoint.listener,
                                                                                  "ssl.principal.mapping.rules"),
                                    authenticator=self._sasl.get(endpoint.listener),
                                    sasl_max_receive_size=config.listener_value(endpoint.listener,
                                                                                "sasl.server.max.receive.size"),
                                    hook=self._request_hook, quotas=quotas, request_memory=request_memory)
                self._listeners.append(listener)
                # our own listening sockets, so that a connection is counted when accepted (acceptor.py)
                backlog = self.cluster.config["socket.listen.backlog.size"]
                acceptor = Acceptor(listener, await listening_sockets(endpoint.bind_host, endpoint.bind_port or 0,
                                                                      backlog), backlog)
                endpoint.bind_port = acceptor.sockets[0].getsockname()[1]
                if (node.node_id, endpoint.listener) in self._follow_bound_port:
                    endpoint.port = endpoint.bind_port
                self._acceptors.append(acceptor)
                acceptor.start()
            first = node.endpoints[0]
            node.host, node.port = first.host, first.port
            node.bind_host, node.bind_port = first.bind_host, first.bind_port
        self.port = self.cluster.nodes[0].bind_port or 0
        if self._wildcard_note:
            log.info("listening on every interface (%r): advertising %s to clients, which reaches the broker from "
                     "this machine and through published container ports; set the advertised host "
                     "(--advertised-host, MINIBROKER_ADVERTISED_HOST) or advertised listeners to change it",
                     self.host, self.cluster.nodes[0].host)
        self._ticker = asyncio.create_task(self._tick_forever())

    async def _tick_forever(self) -> None:
        while True:
            await asyncio.sleep(TICK_INTERVAL_S)
            try:
                self.cluster.tick()
                self._close_idle_connections()
            except Exception:
                log.exception("periodic broker work failed")

    def _close_idle_connections(self) -> None:
        """connections.max.idle.ms, as Kafka's Selector expires idle connections, those in a TLS handshake too."""
        now_ms, max_idle_ms = self.cluster.clock.now_ms(), self.cluster.config["connections.max.idle.ms"]
        for connection in [*self.connections, *self._handshaking()]:
            connection.close_if_idle(now_ms, max_idle_ms)

    def _handshaking(self) -> list[ConnectionAdapter]:
        return [connection for listener in self._listeners for connection in listener.handshaking]

    async def stop(self) -> None:
        """Close listeners and connections."""
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
        for acceptor in self._acceptors:
            acceptor.close()
        for connection in [*self.connections, *self._handshaking()]:
            connection.abort()
        self._acceptors.clear()
        self._listeners.clear()
        await asyncio.sleep(0)  # the cancelled handshakes end (and close their sockets) before the loop may stop

    async def __aenter__(self) -> Broker:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
