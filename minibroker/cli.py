"""`minibroker serve`: run a broker from the command line."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from .apis.releases import RELEASES, release
from .core.config import LISTENER_PREFIX, ConfigError, load_properties
from .core.features import parse_feature_flag

if TYPE_CHECKING:
    from .server.broker import Broker
    from .testing.control import Rule

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
CHECK_TIMEOUT_S = 5.0
CLIENT_CERTIFICATE = "client"  # --generate-certificates: the client certificate's file names and common name
log = logging.getLogger("minibroker")


def version() -> str:
    """minibroker's version: pyproject.toml takes the installed package's from `minibroker.__version__` too, and
    reading it needs no search of the installed distributions (importlib.metadata: about 60 ms of a start)."""
    from . import __version__

    return __version__


class _FromEnvironment(str):
    """A flag's default taken from an environment variable, so that an error about it names the variable."""

    variable: str

    def __new__(cls, variable: str, value: str) -> _FromEnvironment:
        text = super().__new__(cls, value)
        text.variable = variable
        return text


class _VariableError(Exception):
    """A bad value from the environment (argparse would blame the flag)."""


def _from_env(env: Mapping[str, str], variable: str, default: str | None = None) -> str | None:
    value = env.get(variable)
    return default if value is None else _FromEnvironment(variable, value)


def _source(value: object, flag: str) -> str:
    """Where a value came from, to name in an error: its variable and value, or the flag."""
    return f"{value.variable}={value}" if isinstance(value, _FromEnvironment) else flag


def _checked(convert: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse type whose errors about an environment variable's value name the variable."""

    def checked(text: str) -> Any:
        try:
            return convert(text)
        except argparse.ArgumentTypeError as exc:
            if isinstance(text, _FromEnvironment):
                raise _VariableError(f"{text.variable}={text}: {exc}") from None
            raise

    checked.__name__ = convert.__name__
    return checked


class _VersionAction(argparse.Action):
    """`--version`: the version looked up only when asked for (argparse's own action takes it up front)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str = "show program's version number and exit") -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> NoReturn:
        print(f"{parser.prog} {version()}")
        parser.exit()


class _ArgumentParser(argparse.ArgumentParser):
    """Errors in one line on stderr, exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows "(default: ...)" only where there is a default to show."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or action.default is False or action.default == []:
            return action.help
        return super()._get_help_string(action)


def _log_level(text: str) -> str:
    level = text.strip().upper()
    if level not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(f"{str(text)!r} is not a log level: choose one of {', '.join(LOG_LEVELS)}")
    return level


def _port(text: str) -> int:
    if not text.strip().isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"{str(text)!r} is not a port (0-65535)")
    return int(text)


def parse_args(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> argparse.Namespace:
    """The command line; MINIBROKER_* variables of `environ` (default: os.environ) give defaults, flags win."""
    env = os.environ if environ is None else environ
    parser = _ArgumentParser(prog="minibroker", description="A Kafka wire-protocol broker",
                             formatter_class=_HelpFormatter)
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", required=True, metavar="{serve,check}")
    serve = sub.add_parser(
        "serve", help="run the broker", formatter_class=_HelpFormatter,
        description="Run a broker until SIGINT or SIGTERM. When it listens it prints one JSON line on stdout "
                    '({"event": "ready", "bootstrap_servers": ..., "nodes": [...], ...}); logs go to stderr.',
        epilog="Environment: MINIBROKER_HOST, MINIBROKER_PORT, MINIBROKER_ADVERTISED_HOST, "
               "MINIBROKER_ADVERTISED_LISTENERS, MINIBROKER_LOG_LEVEL and MINIBROKER_READY_FILE give the defaults "
               "of the flags of the same names; a flag on the command line wins.")
    serve.add_argument("--host", default=_from_env(env, "MINIBROKER_HOST", "127.0.0.1"),
                       help="address to listen on; 0.0.0.0 for every interface (env MINIBROKER_HOST)")
    serve.add_argument("--port", type=_checked(_port), default=_from_env(env, "MINIBROKER_PORT", "9092"),
                       help="port to listen on; 0 picks a free one (env MINIBROKER_PORT)")
    serve.add_argument("--nodes", type=int, default=1,
                       help="simulated nodes in one process, on consecutive ports from --port")
    serve.add_argument("--ports", help="explicit comma-separated ports, one per node (overrides --port/--nodes)")
    serve.add_argument("--advertised-host", metavar="HOST", default=_from_env(env, "MINIBROKER_ADVERTISED_HOST"),
                       help="the host Metadata gives clients for every node, each with its own port (default: "
                            "--host, or localhost when --host is 0.0.0.0 or ::) (env MINIBROKER_ADVERTISED_HOST)")
    serve.add_argument("--advertised-listeners", metavar="HOST:PORT[,HOST:PORT...]",
                       default=_from_env(env, "MINIBROKER_ADVERTISED_LISTENERS"),
                       help="the address Metadata gives clients for each node, e.g. a proxy in front of the "
                            "broker; overrides --advertised-host (env MINIBROKER_ADVERTISED_LISTENERS)")
    serve.add_argument("--as-version", default="latest", metavar="RELEASE",
                       help="speak as this Kafka release: its API versions and features, no KIP-1269 "
                            f"({', '.join(RELEASES)})")
    serve.add_argument("--node-profile", action="append", default=[], metavar="NODE_ID=RELEASE",
                       help="one node speaks as another release, e.g. 2=3.9 (repeatable)")
    serve.add_argument("--feature", action="append", default=[], metavar="NAME=LEVEL",
                       help="an initial finalized feature level, as `kafka-storage format --feature` sets it, "
                            "e.g. transaction.version=2 or metadata.version=25 (repeatable)")
    serve.add_argument("--config", type=Path, help="a Kafka-style server.properties file")
    serve.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="override one config (repeatable)")
    serve.add_argument("--generate-certificates", type=Path, metavar="DIR",
                       help="testing aid: write a throwaway CA and a broker certificate (for localhost, the "
                            "loopback address and the advertised host) into DIR and use them for SSL and "
                            "SASL_SSL listeners; clients trust DIR/ca.pem (also in the ready line as ca_path); "
                            "DIR/client.pem and DIR/client.key are a client certificate for mutual TLS (CN=client)")
    serve.add_argument("--add-scram", action="append", default=[], metavar="MECHANISM=[name=USER,password=PW]",
                       help="a SCRAM user to start with, as `kafka-storage format --add-scram` takes it "
                            "(repeatable), e.g. 'SCRAM-SHA-512=[name=alice,password=alice-secret]'")
    serve.add_argument("--fault", action="append", default=[], metavar="RULE",
                       help="testing aid: drop or delay responses, e.g. produce:drop:every=7 "
                            "(see minibroker/testing/faults.py)")
    serve.add_argument("--control-port", type=int, metavar="PORT",
                       help="testing aid: serve test control (hold, fail, delay, drop, move leaders, count "
                            "in-flight Produce) on this port, 0 for any free one (see minibroker/testing/control.py)")
    serve.add_argument("--ready-file", metavar="PATH", default=_from_env(env, "MINIBROKER_READY_FILE"),
                       help="once listening, also write the JSON ready line to PATH (atomically: PATH.tmp, "
                            "then renamed); one left from an earlier run is removed at start-up, nothing removes "
                            "it on exit; `minibroker check` reads it (env MINIBROKER_READY_FILE)")
    serve.add_argument("--stop-on-stdin-close", action="store_true",
                       help="stop when standard input closes: a parent that holds its pipe takes the broker down "
                            "with it, however the parent ends (start_broker() in minibroker/testing/process.py)")
    serve.add_argument("--log-level", type=_checked(_log_level),
                       default=_from_env(env, "MINIBROKER_LOG_LEVEL", "INFO"),
                       metavar="{" + ",".join(LOG_LEVELS) + "}",
                       help="logging threshold, any case; DEBUG logs every connection and request "
                            "(env MINIBROKER_LOG_LEVEL)")
    check = sub.add_parser(
        "check", help="health check: ask a broker for its API versions", formatter_class=_HelpFormatter,
        description="Send an ApiVersions request; exit 0 when the broker answers without error, 1 otherwise "
                    "(with the reason on stderr).")
    check.add_argument("address", nargs="?", metavar="HOST:PORT",
                       help="the broker to ask (default: the first node's address in the ready file "
                            "MINIBROKER_READY_FILE names, once it exists, else 127.0.0.1 on MINIBROKER_PORT or 9092)")
    check.add_argument("--timeout", type=float, default=CHECK_TIMEOUT_S, metavar="SECONDS",
                       help="give up after this long")
    try:
        args = parser.parse_args(argv)
        if args.command == "check" and args.address is None:
            args.address = _check_address(env)
    except _VariableError as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    return args


def _check_address(env: Mapping[str, str]) -> str:
    """`check`'s broker: the first node's from the ready file once it exists (so a port given on serve's command
    line is followed), else 127.0.0.1 on MINIBROKER_PORT."""
    ready_file = _from_env(env, "MINIBROKER_READY_FILE")
    if ready_file:
        try:
            node = json.loads(Path(ready_file).read_text())["nodes"][0]
        except FileNotFoundError:
            node = None  # not ready yet, or never started with it
        except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise _VariableError(f"{_source(ready_file, '')}: not a ready file: {exc}") from None
        if node is not None:
            # the PLAINTEXT listener where a node has several: check speaks neither TLS nor SASL
            listeners = node.get("listeners") or [node]
            listener = next((e for e in listeners if e.get("security_protocol", "PLAINTEXT") == "PLAINTEXT"),
                            listeners[0])
            host = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(listener["host"], listener["host"])
            return f"[{host}]:{listener['port']}" if ":" in host else f"{host}:{listener['port']}"
    port = _from_env(env, "MINIBROKER_PORT", "9092")
    return f"127.0.0.1:{_checked(_port)(port or '9092')}"


def _parse_listeners(spec: str | None) -> list[tuple[str, int]] | None:
    """`host:port,host:port` into pairs; ValueError names the bad entry (and the variable it came from)."""
    if spec is None:
        return None
    listeners = []
    for item in spec.split(","):
        host, sep, port = item.strip().rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"{_source(spec, '--advertised-listeners')}: {item!r} is not HOST:PORT")
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


def _parse_features(specs: list[str]) -> dict[str, int]:
    """`--feature NAME=LEVEL` items, as StorageTool parses them; ValueError with its message."""
    return dict(parse_feature_flag(item) for item in specs)


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


def make_broker(args: argparse.Namespace, configs: dict[str, str]) -> Broker:
    """The Broker `serve` runs, not yet started."""
    from .server.broker import Broker

    ports = [int(p) for p in args.ports.split(",")] if args.ports else None
    return Broker(host=args.host, port=args.port, config=configs, nodes=args.nodes, ports=ports,
                  advertised_listeners=_parse_listeners(args.advertised_listeners),
                  advertised_host=args.advertised_host,
                  as_version=args.as_version, node_releases=_parse_node_profiles(args.node_profile),
                  features=_parse_features(args.feature))


def _speaks_as(release_name: str) -> str:
    """A node's protocol profile in words (apis/releases.py)."""
    if release(release_name).kip1269:
        return f"{release_name} (every version minibroker serves, with KIP-1269)"
    return f"Kafka {release_name}"


def _log_start(broker: Broker, configs: dict[str, str], control_port: int | None, faults: list[str]) -> None:
    """At INFO: every node with its release and every listener, the control port, the start-up faults, and the
    configs that differ from their defaults."""
    first = broker.cluster.nodes[0]
    log.info("minibroker listening on %s:%d", first.bind_host, first.bind_port)  # start_broker waits for it
    for node in broker.cluster.nodes:
        log.info("minibroker node %d listening on %s:%d, advertised as %s:%d, speaks as %s",
                 node.node_id, node.bind_host, node.bind_port, node.host, node.port, _speaks_as(node.release))
        if len(node.endpoints) > 1:
            for endpoint in node.endpoints:
                log.info("minibroker node %d listener %s (%s) on %s:%d, advertised as %s:%d", node.node_id,
                         endpoint.listener, endpoint.security_protocol, endpoint.bind_host, endpoint.bind_port,
                         endpoint.host, endpoint.port)
    if control_port is not None:
        log.info("minibroker control listening on %s:%d", broker.host, control_port)
    if faults:
        # they act on every matching request until the broker stops; control's clear() keeps them
        log.info("minibroker faults from --fault: %s", ", ".join(faults))
    config = broker.cluster.config
    changed = []
    for name in configs:
        if name.startswith(LISTENER_PREFIX):  # listener.name.<listener>.<config>
            listener, base, definition = config.listener_config_def(name)
            value = config.listener_static[listener][base]
        else:
            definition = config.broker_def(name)
            value = config.static[name]
        if definition.has_default and value == definition.default:
            continue
        changed.append(f"{name}={'[hidden]' if definition.sensitive else definition.render(value)}")
    log.info("minibroker non-default configs: %s", ", ".join(changed) or "none")


def ready_event(broker: Broker, control_port: int | None = None, ca_path: Path | None = None) -> dict[str, Any]:
    """The ready signal: where clients connect, each node's bind and advertised address and release, the control
    port (and with --generate-certificates the CA clients trust and the client certificate beside it)."""
    nodes = broker.listeners()
    for entry, node in zip(nodes, broker.cluster.nodes, strict=True):
        entry["release"] = node.release
    event = {"event": "ready", "pid": os.getpid(), "bootstrap_servers": broker.bootstrap_servers,
             "nodes": nodes, "control_port": control_port, "version": version()}
    if ca_path is not None:
        event["ca_path"] = str(ca_path)
        event["client_certificate_path"] = str(ca_path.with_name(f"{CLIENT_CERTIFICATE}.pem"))
        event["client_key_path"] = str(ca_path.with_name(f"{CLIENT_CERTIFICATE}.key"))
    return event


def _generated_keystore(args: argparse.Namespace) -> dict[str, str]:
    """--generate-certificates: a CA and broker certificate in DIR, as the broker's PEM keystore configs."""
    from .server.broker import WILDCARD_HOSTS
    from .testing.certs import make_broker_certificate, make_ca, make_client_certificate

    hosts = {"localhost", "127.0.0.1",
             *(h for h in (args.host, args.advertised_host) if h and h not in WILDCARD_HOSTS)}
    ca = make_ca(args.generate_certificates)
    certificate = make_broker_certificate(ca, sorted(hosts))
    # what a client of a listener with ssl.client.auth=required presents
    client = make_client_certificate(ca, CLIENT_CERTIFICATE, name=CLIENT_CERTIFICATE)
    log.info("minibroker wrote a throwaway CA to %s; clients trust it as their CA file", ca.ca_path)
    log.info("minibroker wrote a client certificate for mutual TLS to %s with its key %s (principal User:CN=%s)",
             client.cert_path, client.key_path, CLIENT_CERTIFICATE)
    return certificate.keystore_configs("PEM")


def _parse_faults(specs: list[str]) -> list[Rule]:
    """The --fault rules; testing/faults.py is imported only for some (with test control, every API's handler)."""
    if not specs:
        return []
    from .testing.faults import parse_faults as parse

    return parse(specs)


def _write_ready_file(path: Path, text: str) -> None:
    """Readers never see half a file: write a sibling, then rename it over PATH."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


async def _serve(args: argparse.Namespace, configs: dict[str, str], broker: Broker) -> int:
    if args.add_scram:  # credentials.py (SCRAM's hashing) loads only for them
        from .core.credentials import parse_add_scram

        for seed in map(parse_add_scram, args.add_scram):
            broker.cluster.credentials.put_scram(seed.user, seed.mechanism, seed.credential)
    faults = _parse_faults(args.fault)
    control = control_server = control_port = None
    if faults or args.control_port is not None:
        from .testing.control import Control

        control = Control.attach(broker, faults)
    await broker.start()
    if control is not None and args.control_port is not None:
        from .testing.control import serve_control

        control_server = await serve_control(control, broker.host, args.control_port)
        control_port = control_server.sockets[0].getsockname()[1]
    # Handlers go in before the ready line: a SIGTERM sent the moment a launcher sees it must still stop cleanly.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        _log_start(broker, configs, control_port, args.fault)
        ca_path = args.generate_certificates / "ca.pem" if args.generate_certificates is not None else None
        line = json.dumps(ready_event(broker, control_port, ca_path))
        if args.ready_file is not None:
            _write_ready_file(Path(args.ready_file), line + "\n")
        print(line, flush=True)
    except OSError as exc:
        log.error("minibroker cannot report that it is ready: %s", exc)
        await broker.stop()
        return 1
    if args.stop_on_stdin_close:
        _stop_on_stdin_close(loop, stop)
    await stop.wait()
    if control_server is not None:
        control_server.close()
    await broker.stop()
    log.info("minibroker stopped")
    return 0


def _stop_on_stdin_close(loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> None:
    """Set `stop` once standard input reaches its end (what it carries is read and dropped)."""
    fd = sys.stdin.fileno()

    def readable() -> None:
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            log.info("minibroker standard input closed: stopping")
            loop.remove_reader(fd)
            stop.set()

    loop.add_reader(fd, readable)


def _check(address: str, timeout: float) -> int:
    """`minibroker check`: 0 when the broker answers ApiVersions with error code 0, else 1 and one line why."""
    from .protocol.messages import ApiVersionsRequest
    from .testing.wire import WireClient

    host, sep, port = address.rpartition(":")
    host = host.strip("[]")  # [::1]:9092
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        print(f"minibroker check: error: {address!r} is not HOST:PORT", file=sys.stderr)
        return 2
    request = ApiVersionsRequest(client_software_name="minibroker-check", client_software_version=version())
    try:
        with WireClient(host, int(port), client_id="minibroker-check", timeout=timeout) as wire:
            response = wire.request(request, 3)
    except TimeoutError:
        print(f"minibroker check: {address}: no answer, timed out after {timeout:g} s", file=sys.stderr)
        return 1
    except OSError as exc:  # refused, reset, closed, unknown host
        print(f"minibroker check: {address}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # an answer, but not a Kafka one
        print(f"minibroker check: {address}: unreadable answer: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    if response.error_code != 0:
        print(f"minibroker check: {address}: ApiVersions answered error code {response.error_code}",
              file=sys.stderr)
        return 1
    print(f"minibroker check: {address} is up ({len(response.api_keys)} APIs)")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `minibroker` command."""
    args = parse_args(argv)
    if args.command == "check":
        return _check(args.address, args.timeout)
    if args.nodes < 1:
        print("minibroker: refusing to start: --nodes must be at least 1", file=sys.stderr)
        return 2
    logging.basicConfig(level=args.log_level, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.ready_file is not None:
        # one left by an earlier run would tell `check` and scripts of a broker that is not there
        with contextlib.suppress(OSError):
            Path(args.ready_file).unlink()
    try:
        configs = _collect_configs(args)
        if args.generate_certificates is not None:
            configs = {**_generated_keystore(args), **configs}
        from .core.config import BrokerConfig
        from .server.broker import cluster_config

        _parse_faults(args.fault)
        if args.add_scram:
            from .core.credentials import parse_add_scram

            for argument in args.add_scram:
                parse_add_scram(argument)
        release(args.as_version)
        profiles = _parse_node_profiles(args.node_profile)
        first_id = BrokerConfig(configs, profile=args.as_version).node_id
        cluster_config(configs, profiles.get(first_id, args.as_version))  # validate everything before binding
        node_ids = range(first_id, first_id + (len(args.ports.split(",")) if args.ports else args.nodes))
        if set(profiles) - set(node_ids):
            raise ValueError(f"--node-profile names node(s) {sorted(set(profiles) - set(node_ids))}; "
                             f"the nodes are {list(node_ids)}")
        listeners = _parse_listeners(args.advertised_listeners)
        node_count = len(args.ports.split(",")) if args.ports else args.nodes
        if listeners is not None and len(listeners) != node_count:
            raise ValueError(f"{_source(args.advertised_listeners, '--advertised-listeners')} lists "
                             f"{len(listeners)} addresses for {node_count} nodes")
        if args.ready_file is not None and not Path(args.ready_file).parent.is_dir():
            raise ValueError(f"{_source(args.ready_file, '--ready-file')}: no directory "
                             f"{str(Path(args.ready_file).parent)!r}")
        broker = make_broker(args, configs)  # listeners, keystores and SASL settings are checked here
    except ValueError as exc:
        print(f"minibroker: refusing to start: {exc}", file=sys.stderr)
        return 2
    except (ConfigError, OSError) as exc:
        print(f"minibroker: refusing to start: {getattr(exc, 'message', None) or exc}", file=sys.stderr)
        return 2
    try:
        import uvloop

        return uvloop.run(_serve(args, configs, broker))
    except OSError as exc:
        print(f"minibroker: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
