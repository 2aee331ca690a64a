"""`minibroker serve`: run a broker from the command line."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from pathlib import Path

from .apis.releases import release
from .core.config import ConfigError, load_properties
from .testing.faults import parse_faults


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="minibroker", description="A Kafka wire-protocol broker")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the broker")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=9092, help="port to listen on; 0 picks a free one")
    serve.add_argument("--nodes", type=int, default=1,
                       help="simulated nodes in one process, on consecutive ports from --port (default 1)")
    serve.add_argument("--ports", help="explicit comma-separated ports, one per node (overrides --port/--nodes)")
    serve.add_argument("--advertised-listeners", metavar="HOST:PORT[,HOST:PORT...]",
                       help="the address Metadata gives clients for each node (default: where it listens), "
                            "e.g. a proxy in front of the broker")
    serve.add_argument("--as-version", default="latest", metavar="RELEASE",
                       help="speak as this Kafka release: its API versions, no KIP-1269 "
                            "(2.8, 3.9, 4.0, 4.1, 4.2 or latest; default latest)")
    serve.add_argument("--node-profile", action="append", default=[], metavar="NODE_ID=RELEASE",
                       help="one node speaks as another release, e.g. 2=3.9 (repeatable)")
    serve.add_argument("--config", type=Path, help="a Kafka-style server.properties file")
    serve.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="override one config (repeatable)")
    serve.add_argument("--fault", action="append", default=[], metavar="RULE",
                       help="testing aid: drop or delay responses, e.g. produce:drop:every=7 "
                            "(see minibroker/testing/faults.py)")
    serve.add_argument("--control-port", type=int, metavar="PORT",
                       help="testing aid: serve test control (hold, fail, delay, drop, move leaders, count "
                            "in-flight Produce) on this port, 0 for any free one (see minibroker/testing/control.py)")
    serve.add_argument("--log-level", default="INFO", help="Python logging level")
    return parser.parse_args(argv)


def _parse_listeners(spec: str | None) -> list[tuple[str, int]] | None:
    """`host:port,host:port` into pairs; ValueError names the bad entry."""
    if spec is None:
        return None
    listeners = []
    for item in spec.split(","):
        host, sep, port = item.strip().rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"--advertised-listeners: {item!r} is not HOST:PORT")
        listeners.append((host, int(port)))
    return listeners


def _parse_node_profiles(specs: list[str]) -> dict[int, str]:
    """`2=3.9` items into {2: "3.9"}; ValueError names the bad item."""
    profiles = {}
    for item in specs:
        node_id, sep, name = item.partition("=")
        if not sep or not node_id.strip().lstrip("-").isdigit():
            raise ValueError(f"--node-profile expects NODE_ID=RELEASE, got {item!r}")
        release(name.strip())
        profiles[int(node_id)] = name.strip()
    return profiles


def _collect_configs(args: argparse.Namespace) -> dict[str, str]:
    configs: dict[str, str] = {}
    if args.config is not None:
        configs.update(load_properties(args.config.read_text()))
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--set expects KEY=VALUE, got {item!r}")
        configs[key.strip()] = value.strip()
    return configs


async def _serve(args: argparse.Namespace, configs: dict[str, str]) -> None:
    from .server.broker import Broker

    ports = [int(p) for p in args.ports.split(",")] if args.ports else None
    broker = Broker(host=args.host, port=args.port, config=configs,
                    faults=parse_faults(args.fault), control_port=args.control_port, nodes=args.nodes, ports=ports,
                    advertised_listeners=_parse_listeners(args.advertised_listeners),
                    as_version=args.as_version, node_releases=_parse_node_profiles(args.node_profile))
    await broker.start()
    logger = logging.getLogger("minibroker")
    first, *others = broker.cluster.nodes
    logger.info("minibroker listening on %s:%d", first.bind_host, first.bind_port)
    for node in others:
        logger.info("minibroker node %d listening on %s:%d", node.node_id, node.bind_host, node.bind_port)
    if broker.control_port is not None:
        logger.info("minibroker control listening on %s:%d", args.host, broker.control_port)
    for node in broker.cluster.nodes:
        if (node.host, node.port) != (node.bind_host, node.bind_port):
            logger.info("minibroker node %d advertised as %s:%d", node.node_id, node.host, node.port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await broker.stop()
    logging.getLogger("minibroker").info("minibroker stopped")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `minibroker` command."""
    args = _parse_args(argv)
    if args.nodes < 1:
        print("minibroker: refusing to start: --nodes must be at least 1", file=sys.stderr)
        return 2
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        configs = _collect_configs(args)
        from .core.config import BrokerConfig
        from .server.broker import cluster_config

        parse_faults(args.fault)
        release(args.as_version)
        profiles = _parse_node_profiles(args.node_profile)
        first_id = BrokerConfig(configs).node_id
        cluster_config(configs, profiles.get(first_id, args.as_version))  # validate everything before binding
        node_ids = range(first_id, first_id + (len(args.ports.split(",")) if args.ports else args.nodes))
        if set(profiles) - set(node_ids):
            raise ValueError(f"--node-profile names node(s) {sorted(set(profiles) - set(node_ids))}; "
                             f"the nodes are {list(node_ids)}")
        listeners = _parse_listeners(args.advertised_listeners)
        node_count = len(args.ports.split(",")) if args.ports else args.nodes
        if listeners is not None and len(listeners) != node_count:
            raise ValueError(f"--advertised-listeners lists {len(listeners)} addresses for {node_count} nodes")
    except ValueError as exc:
        print(f"minibroker: refusing to start: {exc}", file=sys.stderr)
        return 2
    except (ConfigError, OSError) as exc:
        print(f"minibroker: refusing to start: {getattr(exc, 'message', None) or exc}", file=sys.stderr)
        return 2
    try:
        import uvloop

        uvloop.run(_serve(args, configs))
    except OSError as exc:
        print(f"minibroker: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    return 0
