"""SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka's ScramSaslServer.

    client-first  n,[a=<authzid>],n=<saslname>,r=<client nonce>[,<ext>=<value>...]
    server-first  r=<client nonce><server nonce>,s=<base64 salt>,i=<iterations>
    client-final  c=<base64 gs2 header>,r=<nonce>[,<ext>...],p=<base64 proof>
    server-final  v=<base64 server signature>

Only the gs2 flag `n` (no channel binding) is accepted, as in Kafka. Messages are matched with
ScramMessages' grammar, and the AuthMessage is rebuilt from the parsed parts as ScramFormatter
does (so a client that spells a part differently fails as it would against Kafka). Unknown
extensions are ignored; `tokenauth=true` asks for delegation-token authentication, which fails
here (no delegation tokens are issued). Every failure except a different authzid reaches the
client as the generic message (Kafka throws plain SaslExceptions for them); a proof of the
wrong length closes the connection unanswered, as it does in Kafka.
"""

from __future__ import annotations

import base64
import hmac
import re
from collections.abc import Callable

from ...core.credentials import SCRAM_MECHANISMS, CredentialStore, ScramCredential, ScramMechanism, secure_random_string
from .base import SaslAuthenticationError, SaslException, SaslFatalError, SaslServer

# ScramMessages.AbstractScramMessage's character classes, with Java's `&&[^...]` spelt out
_VALUE = r"[\x01-\x2b\x2d-\x7f]+"  # [\x01-\x7F&&[^,]]+
_PRINTABLE = r"[\x21-\x2b\x2d-\x7e]+"  # [\x21-\x7E&&[^,]]+
_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_B64 = r"[a-zA-Z0-9/+]"
_BASE64 = rf"(?:{_B64}{{4}})*(?:{_B64}{{3}}=|{_B64}{{2}}==)?"
_RESERVED = rf"(?:m={_VALUE},)?"
_EXTENSIONS = rf"(?:,[A-Za-z]+={_VALUE})*"

CLIENT_FIRST_PATTERN = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,{_RESERVED}n=(?P<saslname>{_SASLNAME}),r=(?P<nonce>{_PRINTABLE})"
    rf"(?P<extensions>{_EXTENSIONS})")
CLIENT_FINAL_PATTERN = re.compile(
    rf"c=(?P<channel>{_BASE64}),r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS},p=(?P<proof>{_BASE64})")

TOKEN_AUTH_EXTENSION = "tokenauth"  # ScramLoginModule.TOKEN_AUTH_CONFIG, the one extension Kafka knows


def username_from_sasl_name(sasl_name: str) -> str:
    """Undo RFC 5802's `=2C`/`=3D` escaping as ScramFormatter.username; ValueError for a stray '='."""
    username = sasl_name.replace("=2C", ",")
    if "=" in username.replace("=3D", ""):
        raise ValueError(f"Invalid username: {sasl_name}")
    return username.replace("=3D", "=")


def sasl_name_from_username(username: str) -> str:
    """RFC 5802's escaping of a username (ScramFormatter.saslName)."""
    return username.replace("=", "=3D").replace(",", "=2C")


def _java_string_hash(text: str) -> int:
    """String.hashCode, over UTF-16 code units, as an unsigned 32-bit number."""
    data = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


def _java_signed(value: int) -> int:
    """An unsigned 32-bit number as Java's int."""
    return value - (1 << 32) if value >= 1 << 31 else value


def _java_bucket(key: str, capacity: int) -> int:
    h = _java_string_hash(key)
    return (h ^ (h >> 16)) & (capacity - 1)


#: The salt of the extension order (see kafka_extensions_order). A Kafka JVM draws its ImmutableCollections salt
#: from System.nanoTime when it starts; minibroker is a Kafka whose JVM drew this one, so that a given client-first
#: message always gets the same answer.
EXTENSIONS_SALT = 0


def kafka_extensions_order(pairs: list[tuple[str, str]], salt: int = EXTENSIONS_SALT) -> dict[str, str]:
    """The pairs in the order Kafka 4.x iterates its extensions map, on a JVM whose ImmutableCollections salt
    (SALT32L, a 32-bit number) is `salt`.

    Utils.parseMap fills a HashMap (16 buckets, doubling past 3/4 full) and SaslExtensions keeps Map.copyOf of
    it: for two or more entries an immutable MapN, a table of 2n slots filled in the HashMap's order (slot
    hashCode mod 2n, else the next free one), iterated from a slot and in a direction that the salt picks.
    ScramMessages rebuilds client-first-bare in this order, so a client that listed two or more extensions in
    another order fails the proof against Kafka too; a Java 4.x client lists them in its own JVM's order, so
    against Kafka it authenticates only when both JVMs drew salts giving the same order.
    """
    items: dict[str, str] = {}
    for key, value in pairs:  # a repeated key keeps its first position and takes the last value
        items[key] = value
    if len(items) < 2:
        return items
    capacity = 16
    while len(items) > capacity * 0.75:
        capacity *= 2
    slots: list[str | None] = [None] * (2 * len(items))
    for name in sorted(items, key=lambda k: _java_bucket(k, capacity)):
        slot = _java_signed(_java_string_hash(name)) % len(slots)  # Math.floorMod
        while slots[slot] is not None:
            slot = (slot + 1) % len(slots)
        slots[slot] = name
    slot = (salt * len(slots)) >> 32
    step = 1 if salt % 2 == 0 else -1  # ImmutableCollections.REVERSE: an even salt walks up
    order: list[str] = []
    while len(order) < len(items):
        slot = (slot + step) % len(slots)
        entry = slots[slot]
        if entry is not None:
            order.append(entry)
    return {key: items[key] for key in order}


def java_sized_hash_map_keys(keys: list[str]) -> list[str]:
    """`keys` in the order a `new HashMap<>(keys.size())` filled with them iterates: its table starts at the
    power of two at or above the size and doubles past 3/4 full; buckets in order, a bucket's keys in
    insertion order. Kafka's ChannelBuilders keeps a SASL listener's mechanisms (JAAS contexts) in one, and
    SaslHandshake lists them in its order."""
    unique = list(dict.fromkeys(keys))
    capacity = 1 << max(0, len(unique) - 1).bit_length()
    while len(unique) > int(capacity * 0.75):
        capacity *= 2
    return sorted(unique, key=lambda key: _java_bucket(key, capacity))


def _decode(token: bytes) -> str:
    # new String(bytes, UTF_8): bad sequences become U+FFFD (and then fail the ASCII grammar)
    return token.decode("utf-8", errors="replace")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class ScramSaslServer(SaslServer):
    """One SCRAM exchange: client-first, server-first, client-final, server-final."""

    def __init__(self, mechanism: str | ScramMechanism, credentials: CredentialStore, reauthenticating: bool = False,
                 server_nonce: Callable[[], str] = secure_random_string, *,
                 extensions_salt: int = EXTENSIONS_SALT) -> None:
        super().__init__(reauthenticating)
        self._scram = mechanism if isinstance(mechanism, ScramMechanism) else SCRAM_MECHANISMS[mechanism]
        self.mechanism = self._scram.name
        self._credentials = credentials
        self._server_nonce = server_nonce
        self._extensions_salt = extensions_salt
        self._credential: ScramCredential | None = None
        self._client_first_bare = ""
        self._server_first = ""
        self._nonce = ""
        self.extensions: dict[str, str] = {}

    def _evaluate(self, token: bytes) -> tuple[bytes, bool]:
        if self._credential is None:
            return self._client_first(token), False
        return self._client_final(token), True

    def _client_first(self, token: bytes) -> bytes:
        message = _decode(token)
        match = CLIENT_FIRST_PATTERN.fullmatch(message)
        if match is None:
            raise SaslException(f"Invalid SCRAM client first message format: {message}")
        sasl_name, client_nonce = match["saslname"], match["nonce"]
        pairs = [part.partition("=") for part in match["extensions"].split(",")[1:]]
        self.extensions = kafka_extensions_order([(key, value) for key, _, value in pairs], self._extensions_salt)
        server_nonce = self._server_nonce()
        try:
            username = username_from_sasl_name(sasl_name)
        except ValueError as e:
            raise SaslException("Authentication failed: Credentials could not be obtained") from e
        if self.extensions.get(TOKEN_AUTH_EXTENSION, "").lower() == "true":
            raise SaslException(f"Token Authentication failed: Invalid tokenId : {username}")
        credential = self._credentials.scram_credential(username, self.mechanism)
        if credential is None:
            raise SaslException("Authentication failed: Invalid user credentials")
        authorization_id = match["authzid"] or ""
        if authorization_id and authorization_id != username:
            raise SaslAuthenticationError(
                "Authentication failed: Client requested an authorization id that is different from username")
        if credential.iterations < self._scram.min_iterations:
            raise SaslException(f"Iterations {credential.iterations} is less than the minimum "
                                f"{self._scram.min_iterations} for {self._scram.enum_name}")
        extensions = ",".join(f"{key}={value}" for key, value in self.extensions.items())
        self._client_first_bare = f"n={sasl_name},r={client_nonce}" + (f",{extensions}" if extensions else "")
        self._nonce = client_nonce + server_nonce
        self._server_first = f"r={self._nonce},s={_b64(credential.salt)},i={credential.iterations}"
        self._credential = credential
        self._complete_as(username)
        return self._server_first.encode("ascii")

    def _client_final(self, token: bytes) -> bytes:
        credential = self._credential
        assert credential is not None
        self._credential = None  # Kafka clears the credential whatever the outcome
        message = _decode(token)
        match = CLIENT_FINAL_PATTERN.fullmatch(message)
        if match is None:
            raise SaslException(f"Invalid SCRAM client final message format: {message}")
        if match["nonce"] != self._nonce:
            raise SaslException("Invalid client nonce in the final client message.")
        channel_binding = base64.b64decode(match["channel"])
        proof = base64.b64decode(match["proof"])
        auth_message = (f"{self._client_first_bare},{self._server_first},"
                        f"c={_b64(channel_binding)},r={match['nonce']}").encode("ascii")
        client_signature = self._scram.hmac(credential.stored_key, auth_message)
        if len(proof) != len(client_signature):
            # ScramFormatter.xor throws IllegalArgumentException, which no one in Kafka catches
            raise SaslFatalError("Argument arrays must be of the same length")
        client_key = bytes(a ^ b for a, b in zip(client_signature, proof, strict=True))
        if not hmac.compare_digest(self._scram.hash(client_key), credential.stored_key):
            raise SaslException("Invalid client credentials")
        server_signature = self._scram.hmac(credential.server_key, auth_message)
        return f"v={_b64(server_signature)}".encode("ascii")
