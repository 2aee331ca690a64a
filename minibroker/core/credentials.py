"""The users SASL checks: PLAIN passwords from a listener's JAAS text, SCRAM credentials as KRaft keeps them.

Pure data, no I/O. PLAIN users belong to a listener (Kafka reads `user_<name>` options of its
`plain.sasl.jaas.config`); SCRAM credentials belong to the cluster (KRaft metadata, changed by
AlterUserScramCredentials), so `for_listener` gives a listener its own PLAIN users over the same
SCRAM table.

A SCRAM credential stores what the server needs and nothing that lets anyone log in: the salt,
StoredKey = H(HMAC(SaltedPassword, "Client Key")), ServerKey = HMAC(SaltedPassword, "Server Key")
and the iteration count (RFC 5802; Kafka's ScramFormatter and ScramControlManager).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass

from ..protocol.errors import ErrorCode
from ..protocol.jaas import load_server_jaas
from ..protocol.java_base64 import java_base64_decode

PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
JAAS_USER_PREFIX = "user_"


@dataclass(frozen=True, slots=True)
class ScramMechanism:
    """A SCRAM mechanism as Kafka's ScramMechanism enum declares it."""

    name: str  # "SCRAM-SHA-256"
    enum_name: str  # how Kafka prints it in messages: "SCRAM_SHA_256"
    type: int  # the mechanism byte of AlterUserScramCredentials and DescribeUserScramCredentials
    hash_name: str
    min_iterations: int
    max_iterations: int

    def hash(self, data: bytes) -> bytes:
        return hashlib.new(self.hash_name, data).digest()

    def hmac(self, key: bytes, data: bytes) -> bytes:
        return hmac.new(key, data, self.hash_name).digest()

    def salted_password(self, password: str, salt: bytes, iterations: int) -> bytes:
        """Hi(password, salt, i): PBKDF2 with HMAC, one block (Kafka does no SASLprep, only UTF-8)."""
        return hashlib.pbkdf2_hmac(self.hash_name, password.encode("utf-8"), salt, iterations)


SCRAM_SHA_256 = ScramMechanism("SCRAM-SHA-256", "SCRAM_SHA_256", 1, "sha256", 4096, 16384)
SCRAM_SHA_512 = ScramMechanism("SCRAM-SHA-512", "SCRAM_SHA_512", 2, "sha512", 4096, 16384)
SCRAM_MECHANISMS = {m.name: m for m in (SCRAM_SHA_256, SCRAM_SHA_512)}
SCRAM_MECHANISMS_BY_TYPE = {m.type: m for m in (SCRAM_SHA_256, SCRAM_SHA_512)}
MAX_ITERATIONS = 16384  # ScramControlManager.MAX_ITERATIONS


def scram_mechanism(mechanism: str | int | ScramMechanism) -> ScramMechanism:
    """The mechanism for a name ("SCRAM-SHA-512"), a type byte (2) or itself; KeyError if unknown."""
    if isinstance(mechanism, ScramMechanism):
        return mechanism
    if isinstance(mechanism, int):
        return SCRAM_MECHANISMS_BY_TYPE[mechanism]
    return SCRAM_MECHANISMS[mechanism]


@dataclass(frozen=True, slots=True)
class ScramCredential:
    """What the server keeps of a SCRAM password (Kafka's ScramCredential)."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def __repr__(self) -> str:  # as ScramCredentialValue.toString: keys never reach a log
        return "ScramCredential(salt=[hidden], stored_key=[hidden], server_key=[hidden], iterations=[hidden])"


def secure_random_string() -> str:
    """A random 130-bit number in base 36, as ScramFormatter.secureRandomString (nonces and default salts)."""
    value = secrets.randbits(130)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    text = ""
    while True:
        value, digit = divmod(value, 36)
        text = digits[digit] + text
        if value == 0:
            return text


def credential_from_salted_password(mechanism: str | ScramMechanism, salt: bytes, salted_password: bytes,
                                    iterations: int) -> ScramCredential:
    """The stored credential for a salted password, as the controller derives it on an upsertion."""
    mech = scram_mechanism(mechanism)
    stored_key = mech.hash(mech.hmac(salted_password, b"Client Key"))
    server_key = mech.hmac(salted_password, b"Server Key")
    return ScramCredential(bytes(salt), stored_key, server_key, iterations)


def _check_add_scram_iterations(mech: ScramMechanism, iterations: int) -> None:
    if iterations < mech.min_iterations:
        raise ValueError(f"The 'iterations' value must be >= {mech.min_iterations} for add-scram using "
                         f"{mech.enum_name}")
    if iterations > mech.max_iterations:
        raise ValueError(f"The 'iterations' value must be <= {mech.max_iterations} for add-scram using "
                         f"{mech.enum_name}")


def scram_from_password(password: str, mechanism: str | ScramMechanism, iterations: int = 4096,
                        salt: bytes | None = None) -> ScramCredential:
    """A credential for a clear password (what `kafka-storage format --add-scram` stores).

    The salt is random unless given; Kafka's default salt is the UTF-8 of a random base-36 string.
    Iterations outside the mechanism's 4096..16384 raise ValueError with the formatter's message.
    """
    mech = scram_mechanism(mechanism)
    _check_add_scram_iterations(mech, iterations)
    if salt is None:
        salt = secure_random_string().encode("ascii")
    return credential_from_salted_password(mech, salt, mech.salted_password(password, salt, iterations), iterations)


@dataclass(frozen=True, slots=True)
class ScramSeed:
    """One `--add-scram` argument: a user's credential for one mechanism."""

    user: str
    mechanism: ScramMechanism
    credential: ScramCredential


def _java_split(text: str, separator: str) -> list[str]:
    """String.split: trailing empty strings are dropped (but "" stays [""])."""
    parts = text.split(separator)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


def parse_add_scram(argument: str) -> ScramSeed:
    """Parse `SCRAM-SHA-256=[name=alice,password=alice-secret]` as `kafka-storage format --add-scram` does.

    Also `iterations=8192`, `salt=<base64>` and `saltedpassword=<base64>` (with salt); a value may be
    double-quoted. Errors raise ValueError with Kafka's FormatterException messages.
    """
    text = argument.strip()
    equals = text.find("=")
    if equals < 0:
        raise ValueError(f"Failed to find equals sign in SCRAM argument '{text}'")
    mechanism_name, config = text[:equals], text[equals + 1:]
    if mechanism_name not in SCRAM_MECHANISMS:
        raise ValueError(f"The add-scram mechanism {mechanism_name} is not supported.")
    if not config.startswith("["):
        raise ValueError("Expected configuration string to start with [")
    if not config.endswith("]"):
        raise ValueError("Expected configuration string to end with ]")
    mech = SCRAM_MECHANISMS[mechanism_name]
    components: dict[str, str] = {}
    for component in _java_split(config[1:-1], ","):
        key, sep, value = component.partition("=")
        if not sep:
            raise ValueError(f"No equals sign found in SCRAM component: {component}")
        if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
            value = value[1:-1]
        components[key] = value
    name = components.pop("name", None)
    if name is None:
        raise ValueError("You must supply 'name' to add-scram")
    salt: bytes | None = None
    if (salt_text := components.pop("salt", None)) is not None:
        try:
            salt = java_base64_decode(salt_text)
        except ValueError:
            raise ValueError(f"Failed to decode given salt: {salt_text}") from None
    iterations = 4096
    if (iterations_text := components.pop("iterations", None)) is not None:
        if not re.fullmatch(r"[+-]?[0-9]+", iterations_text) or not -2**31 <= int(iterations_text) < 2**31:
            raise ValueError(f"Failed to parse iterations count: {iterations_text}")
        iterations = int(iterations_text)
    password = components.pop("password", None)
    salted_password: bytes | None = None
    if password is None:
        salted_text = components.pop("saltedpassword", None)
        if salted_text is None:
            raise ValueError("You must supply one of 'password' or 'saltedpassword' to add-scram")
        if salt is None:
            raise ValueError("You must supply 'salt' with 'saltedpassword' to add-scram")
        try:
            salted_password = java_base64_decode(salted_text)
        except ValueError:
            raise ValueError(f"Failed to decode given saltedPassword: {salted_text}") from None
    else:
        components.pop("saltedpassword", None)
    if components:
        raise ValueError(f"Unknown SCRAM configurations: {', '.join(sorted(components))}")
    if salted_password is None:
        assert password is not None
        credential = scram_from_password(password, mech, iterations, salt)
    else:
        assert salt is not None
        _check_add_scram_iterations(mech, iterations)
        credential = credential_from_salted_password(mech, salt, salted_password, iterations)
    return ScramSeed(name, mech, credential)


def credential_to_string(credential: ScramCredential) -> str:
    """`salt=...,stored_key=...,server_key=...,iterations=...` (ScramCredentialUtils.credentialToString)."""
    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode("ascii")
    return (f"salt={b64(credential.salt)},stored_key={b64(credential.stored_key)},"
            f"server_key={b64(credential.server_key)},iterations={credential.iterations}")


def credential_from_string(text: str) -> ScramCredential:
    """The inverse of `credential_to_string` (ScramCredentialUtils.credentialFromString)."""
    fields: dict[str, str] = {}
    for token in _java_split(text, ","):
        index = token.find("=")
        if index <= 0:
            raise ValueError(f"Credentials not valid: {text}")
        fields[token[:index]] = token[index + 1:]
    if set(fields) != {"salt", "stored_key", "server_key", "iterations"}:
        raise ValueError(f"Credentials not valid: {text}")
    try:
        return ScramCredential(java_base64_decode(fields["salt"]), java_base64_decode(fields["stored_key"]),
                               java_base64_decode(fields["server_key"]), int(fields["iterations"]))
    except ValueError:
        raise ValueError(f"Credentials not valid: {text}") from None


class CredentialError(Exception):
    """A refused credential change: Kafka's error code and message for AlterUserScramCredentials."""

    def __init__(self, error: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


def _user_and_mechanism(user: str, mechanism: str | int) -> ScramMechanism | CredentialError:
    """ScramControlManager.validateScramUsernameAndMechanism: the mechanism, or why it is refused."""
    if not user:
        return CredentialError(ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
    try:
        return scram_mechanism(mechanism)
    except KeyError:
        return CredentialError(ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")


def validate_scram_upsertion(user: str, mechanism: str | int, iterations: int) -> CredentialError | None:
    """What ScramControlManager.validateUpsertion refuses, or None."""
    mech = _user_and_mechanism(user, mechanism)
    if isinstance(mech, CredentialError):
        return mech
    if iterations < mech.min_iterations:
        return CredentialError(ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations")
    if iterations > MAX_ITERATIONS:
        return CredentialError(ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations")
    return None


class CredentialStore:
    """PLAIN users of one listener and the cluster's SCRAM credentials, keyed by (user, mechanism name)."""

    def __init__(self, plain_users: dict[str, str] | None = None,
                 _scram: dict[tuple[str, str], ScramCredential] | None = None) -> None:
        self._plain: dict[str, str] = dict(plain_users or {})
        self._scram: dict[tuple[str, str], ScramCredential] = {} if _scram is None else _scram

    # PLAIN

    def for_listener(self, plain_jaas_config: str | None) -> CredentialStore:
        """A store with the PLAIN users of this JAAS text (none if None) and this store's SCRAM credentials."""
        store = CredentialStore(_scram=self._scram)
        if plain_jaas_config is not None:
            store.set_plain_users_from_jaas(plain_jaas_config)
        return store

    def set_plain_users_from_jaas(self, jaas_config: str) -> None:
        """Replace the PLAIN users by the `user_<name>` options of a listener's `plain.sasl.jaas.config`.

        Only a PlainLoginModule entry defines users (PlainServerCallbackHandler looks nowhere else);
        the text must hold exactly one login module. Raises JaasConfigError with Kafka's message.
        """
        entry = load_server_jaas(jaas_config)
        users: dict[str, str] = {}
        if entry.login_module == PLAIN_LOGIN_MODULE:
            users = {key[len(JAAS_USER_PREFIX):]: value for key, value in entry.options.items()
                     if key.startswith(JAAS_USER_PREFIX)}
        self._plain = users

    def set_plain_user(self, user: str, password: str) -> None:
        self._plain[user] = password

    def plain_password(self, user: str) -> str | None:
        """The PLAIN password of `user`, or None if there is no such user."""
        return self._plain.get(user)

    def plain_users(self) -> list[str]:
        return sorted(self._plain)

    # SCRAM

    def scram_credential(self, user: str, mechanism: str) -> ScramCredential | None:
        """The user's credential for a SCRAM mechanism name, or None."""
        return self._scram.get((user, mechanism))

    def put_scram(self, user: str, mechanism: str | ScramMechanism, credential: ScramCredential) -> None:
        """Store a credential as is (start-up seeding; no validation)."""
        self._scram[(user, scram_mechanism(mechanism).name)] = credential

    def upsert_scram(self, user: str, mechanism: str | int, iterations: int, salt: bytes,
                     salted_password: bytes) -> None:
        """Create or replace a credential from an AlterUserScramCredentials upsertion.

        Raises CredentialError with Kafka's code and message for what the controller refuses.
        """
        if (error := validate_scram_upsertion(user, mechanism, iterations)) is not None:
            raise error
        mech = scram_mechanism(mechanism)
        self._scram[(user, mech.name)] = credential_from_salted_password(mech, salt, salted_password, iterations)

    def validate_scram_deletion(self, user: str, mechanism: str | int) -> CredentialError | None:
        """What ScramControlManager.validateDeletion refuses, or None."""
        mech = _user_and_mechanism(user, mechanism)
        if isinstance(mech, CredentialError):
            return mech
        if (user, mech.name) not in self._scram:
            return CredentialError(ErrorCode.RESOURCE_NOT_FOUND,
                                   "Attempt to delete a user credential that does not exist")
        return None

    def delete_scram(self, user: str, mechanism: str | int) -> None:
        """Remove a credential; CredentialError as the controller refuses a deletion."""
        if (error := self.validate_scram_deletion(user, mechanism)) is not None:
            raise error
        del self._scram[(user, scram_mechanism(mechanism).name)]

    def scram_users(self) -> dict[str, list[tuple[ScramMechanism, int]]]:
        """Every user with SCRAM credentials: (mechanism, iterations) each (DescribeUserScramCredentials)."""
        users: dict[str, list[tuple[ScramMechanism, int]]] = {}
        for (user, mechanism), credential in sorted(self._scram.items()):
            users.setdefault(user, []).append((SCRAM_MECHANISMS[mechanism], credential.iterations))
        return users

    def __iter__(self) -> Iterator[tuple[str, str, ScramCredential]]:
        """(user, mechanism name, credential) for every SCRAM credential."""
        for (user, mechanism), credential in sorted(self._scram.items()):
            yield user, mechanism, credential
