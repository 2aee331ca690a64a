"""SASL/OAUTHBEARER (RFC 7628) with Kafka's default validator for unsecured JWS tokens.

The client's first message is `n,[a=<authzid>],\\x01auth=Bearer <token>[\\x01<key>=<value>...]\\x01\\x01`
(OAuthBearerClientInitialResponse). The token is checked as OAuthBearerUnsecuredValidatorCallbackHandler
checks it, with the listener's JAAS options:

- `unsecuredValidatorPrincipalClaimName` (default `sub`): the claim naming the principal;
- `unsecuredValidatorScopeClaimName` (default `scope`) and `unsecuredValidatorRequiredScope`
  (space-separated scopes the token must all have);
- `unsecuredValidatorAllowableClockSkewMs` (default 0) for `exp` and `iat`.

The token must have three dot-separated parts, a header with `"alg":"none"`, no signature, an
`exp`, and the principal claim. Kafka decodes the parts with Java's standard Base64 decoder, not
the URL-safe one, so a part holding `-` or `_` is refused here too. A token that fails is
answered, as OAuthBearerSaslServer answers it, with a JSON challenge
(`{"status":"invalid_token"}`, or `insufficient_scope` with the required scope) that does not
end the exchange: the client replies with a single `\\x01`, and only then does the exchange
fail, with that JSON as the error message. Extensions are all accepted (the unsecured handler
validates every one).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...core.clock import Clock, SystemClock
from ...protocol.java_base64 import java_base64_decode
from .base import SaslAuthenticationError, SaslException, SaslFatalError, SaslServer

OAUTHBEARER_MECHANISM = "OAUTHBEARER"
_SEPARATOR = "\x01"
_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_KEY = r"[A-Za-z]+"
_VALUE = r"[\x21-\x7e \t\r\n]+"
CLIENT_INITIAL_RESPONSE_PATTERN = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,\x01(?P<kvpairs>(?:{_KEY}={_VALUE}\x01)*)\x01")
AUTH_PATTERN = re.compile(r"(?P<scheme>[A-Za-z0-9_]+)[ ]+(?P<token>[-_~+/.a-zA-Z0-9]+=*)")  # RFC 6750's b64token
_SCOPE_ITEM = re.compile(r"[\x23-\x5b\x5d-\x7e\x21]+")
_JAVA_WHITESPACE = "".join(chr(c) for c in range(33))  # what String.trim() removes
_LONG_MAX = 2**63 - 1


def _trim(text: str) -> str:
    return text.strip(_JAVA_WHITESPACE)


class OAuthBearerConfigError(ValueError):
    """A validator option Kafka refuses (OAuthBearerConfigException); the message is Kafka's."""


@dataclass(frozen=True, slots=True)
class UnsecuredValidatorOptions:
    """The options OAuthBearerUnsecuredValidatorCallbackHandler reads from the listener's JAAS entry."""

    principal_claim_name: str = "sub"
    scope_claim_name: str = "scope"
    required_scope: tuple[str, ...] = ()
    allowable_clock_skew_ms: int = 0

    @classmethod
    def from_jaas_options(cls, options: Mapping[str, str]) -> UnsecuredValidatorOptions:
        """Read `unsecuredValidator*` options; OAuthBearerConfigError for a bad scope or clock skew."""
        principal = _trim(options.get("unsecuredValidatorPrincipalClaimName") or "") or "sub"
        scope_claim = _trim(options.get("unsecuredValidatorScopeClaimName") or "") or "scope"
        required: list[str] = []
        for item in _trim(options.get("unsecuredValidatorRequiredScope") or "").split(" "):
            if item:
                if not _SCOPE_ITEM.fullmatch(item):
                    raise OAuthBearerConfigError(f"Invalid scope value: {item}")
                required.append(item)
        skew_text = _trim(options.get("unsecuredValidatorAllowableClockSkewMs") or "")
        skew = 0
        if skew_text:
            if not re.fullmatch(r"[+-]?[0-9]+", skew_text) or not -2**31 <= int(skew_text) < 2**31:
                raise OAuthBearerConfigError(f'For input string: "{skew_text}"')
            skew = int(skew_text)
        if skew < 0:
            raise OAuthBearerConfigError(f"Allowable clock skew millis must not be negative: {skew_text}")
        return cls(principal, scope_claim, tuple(required), skew)


class TokenValidationError(Exception):
    """Why a token was refused (OAuthBearerValidationResult); `scope` is set for a missing required scope."""

    def __init__(self, description: str, scope: str | None = None) -> None:
        super().__init__(description)
        self.description = description
        self.scope = scope


# Jackson's view of the token's JSON, as OAuthBearerUnsecuredJws.toMap converts it: numbers stay
# numbers, arrays become lists of their elements' text, anything else becomes its text.

def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")  # Jackson refuses NaN and Infinity


_JSON = json.JSONDecoder(parse_constant=_reject_constant)


def _as_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return repr(value)
    return ""  # JsonNode.asText() of an object or array


def _convert(value: object) -> object:
    if isinstance(value, list):
        return [_as_text(element) for element in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    return _as_text(value)


def _java_type_name(value: object) -> str:
    if isinstance(value, str):
        return "String"
    if isinstance(value, list):
        return "ArrayList"
    if isinstance(value, float):
        return "Double"
    if isinstance(value, int):
        return "Integer" if -2**31 <= value < 2**31 else "Long" if -2**63 <= value < 2**63 else "BigInteger"
    return type(value).__name__


def _json_members(split: str) -> dict[str, object]:
    try:
        data = java_base64_decode(split)
    except ValueError:
        raise TokenValidationError("malformed Base64 URL encoded value") from None
    try:
        text = data.decode("utf-8").removeprefix("\ufeff").lstrip(" \t\r\n")
        if not text:
            return {}  # Jackson reads no content as a MissingNode, which has no members
        value, _ = _JSON.raw_decode(text)  # like Jackson, what follows the first value is not read
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise TokenValidationError("malformed JSON") from None
    if not isinstance(value, dict):
        return {}
    return {key: _convert(member) for key, member in value.items()}


def _double(value: int | float) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _java_round(value: float) -> int:
    """Math.round(double): half up, clamped to a long."""
    if math.isnan(value):
        return 0
    if math.isinf(value):
        return _LONG_MAX if value > 0 else -_LONG_MAX - 1
    floor = math.floor(value)
    rounded = floor + (1 if value - floor >= 0.5 else 0)
    return max(-_LONG_MAX - 1, min(_LONG_MAX, rounded))


def _java_list(items: list[str] | tuple[str, ...] | set[str]) -> str:
    return "[" + ", ".join(items) + "]"


@dataclass(frozen=True, slots=True)
class UnsecuredJws:
    """A validated unsecured token: its principal, scope, claims and lifetime (OAuthBearerUnsecuredJws)."""

    value: str
    principal_name: str
    scope: frozenset[str]
    lifetime_ms: int  # `exp` in ms since the epoch
    start_time_ms: int | None  # `iat`
    header: Mapping[str, object]
    claims: Mapping[str, object]


_CLAIM_TYPES: dict[str, type | tuple[type, ...]] = {"String": str, "List": list, "Number": (int, float)}


def _claim(claims: Mapping[str, object], name: str, kind: str) -> Any:
    """A claim of a type ("String", "List" or "Number"), or None; TokenValidationError if of another type."""
    value = claims.get(name)
    if value is not None and not isinstance(value, _CLAIM_TYPES[kind]):
        raise TokenValidationError(f"The '{name}' claim was not of type {kind}: {_java_type_name(value)}")
    return value


def parse_unsecured_jws(token: str, principal_claim_name: str = "sub", scope_claim_name: str = "scope") -> UnsecuredJws:
    """Parse a compact unsecured JWS as OAuthBearerUnsecuredJws's constructor does.

    TokenValidationError for what Kafka reports as an illegal token; SaslFatalError for a header
    without `alg`, which Kafka fails on with a NullPointerException (no answer, connection closed).
    """
    if ".." in token:
        raise TokenValidationError("Malformed compact serialization contains '..'")
    splits = token.split(".")
    if len(splits) != 3:
        raise TokenValidationError(
            "Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values")
    header = _json_members(splits[0])
    claims = _json_members(splits[1])
    if "alg" not in header:
        raise SaslFatalError("JWS header must have an Algorithm value")
    if header["alg"] != "none":
        raise TokenValidationError("Unsecured JWS must have 'none' for an algorithm")
    if splits[2]:
        raise TokenValidationError("Unsecured JWS must not contain a digital signature")
    scope_value = claims.get(scope_claim_name)
    if isinstance(scope_value, str):
        scope = frozenset() if not _trim(scope_value) else frozenset({_trim(scope_value)})
    else:
        items = _claim(claims, scope_claim_name, "List") or []
        scope = frozenset(_trim(item) for item in items if _trim(item))
    expiration = _claim(claims, "exp", "Number")
    if expiration is None:
        raise TokenValidationError("No expiration time in JWT")
    principal = _claim(claims, principal_claim_name, "String")
    if principal is None or not _trim(principal):
        raise TokenValidationError(f"No principal name in JWT claim: {principal_claim_name}")
    issued_at = _claim(claims, "iat", "Number")
    return UnsecuredJws(token, principal, scope, _java_round(_double(expiration) * 1000),
                        None if issued_at is None else _java_round(_double(issued_at) * 1000), header, claims)


def validate_unsecured_token(token: str, options: UnsecuredValidatorOptions, now_ms: int) -> UnsecuredJws:
    """The token if OAuthBearerUnsecuredValidatorCallbackHandler accepts it at `now_ms`, else TokenValidationError."""
    jws = parse_unsecured_jws(token, options.principal_claim_name, options.scope_claim_name)
    skew = options.allowable_clock_skew_ms
    issued_at = jws.claims.get("iat")
    expiration = jws.claims["exp"]
    assert isinstance(expiration, int | float)
    if isinstance(issued_at, int | float) and 1000 * _double(issued_at) > now_ms + skew:
        raise TokenValidationError(f"The Issued At value ({_double(issued_at):f} seconds) was after the indicated "
                                   f"time ({now_ms} ms) plus allowable clock skew ({skew} ms)")
    if now_ms - skew >= 1000 * _double(expiration):
        raise TokenValidationError(f"The indicated time ({now_ms} ms) minus allowable clock skew ({skew} ms) was on "
                                   f"or after the Expiration Time value ({_double(expiration):f} seconds)")
    if isinstance(issued_at, int | float) and _double(expiration) <= _double(issued_at):
        raise TokenValidationError(f"The Expiration Time time ({_double(expiration):f} seconds) was not after the "
                                   f"Issued At time ({_double(issued_at):f} seconds)")
    for required in options.required_scope:
        if required not in jws.scope:
            raise TokenValidationError(
                f"The provided scope ({_java_list(sorted(jws.scope))}) was missing a required scope ({required}).  "
                f"All required scope elements: {_java_list(options.required_scope)}",
                scope=_java_list(options.required_scope))
    return jws


def json_error_response(status: str, scope: str | None = None, openid_configuration: str | None = None) -> str:
    """The JSON challenge OAuthBearerSaslServer sends for a refused token (RFC 7628 section 3.2.2)."""
    response = f'{{"status":"{status}"'
    if scope is not None:
        response += f', "scope":"{scope}"'
    if openid_configuration is not None:
        response += f', "openid-configuration":"{openid_configuration}"'
    return response + "}"


class OAuthBearerSaslServer(SaslServer):
    """One OAUTHBEARER exchange: the client's initial response, then (after a refusal) its `\\x01`."""

    mechanism = OAUTHBEARER_MECHANISM

    def __init__(self, options: UnsecuredValidatorOptions | None = None, clock: Clock | None = None,
                 reauthenticating: bool = False) -> None:
        super().__init__(reauthenticating)
        self._options = options or UnsecuredValidatorOptions()
        self._clock = clock or SystemClock()
        self._error_message: str | None = None
        self.token: UnsecuredJws | None = None
        self.extensions: dict[str, str] = {}

    @property
    def credential_expiry_ms(self) -> int | None:
        return self.token.lifetime_ms if self.token is not None and self.complete else None

    def _evaluate(self, token: bytes) -> tuple[bytes, bool]:
        if token == b"\x01" and self._error_message is not None:
            raise SaslAuthenticationError(self._error_message)
        self._error_message = None
        message = token.decode("utf-8", errors="replace")
        match = CLIENT_INITIAL_RESPONSE_PATTERN.fullmatch(message)
        if match is None:
            raise SaslException("Invalid OAUTHBEARER client first message")
        properties: dict[str, str] = {}
        for pair in match["kvpairs"].split(_SEPARATOR)[:-1]:
            key, _, value = pair.partition("=")
            properties[key] = value
        auth = properties.pop("auth", None)
        if auth is None:
            raise SaslException("Invalid OAUTHBEARER client first message: 'auth' not specified")
        auth_match = AUTH_PATTERN.fullmatch(auth)
        if auth_match is None:
            raise SaslException("Invalid OAUTHBEARER client first message: invalid 'auth' format")
        if auth_match["scheme"].lower() != "bearer":
            # OAuthBearerClientInitialResponse formats this refusal with a group its pattern lacks:
            # the IllegalArgumentException escapes and Kafka closes the connection unanswered
            raise SaslFatalError(f"Invalid scheme in OAUTHBEARER client first message: {auth_match['scheme']}")
        try:
            jws = validate_unsecured_token(auth_match["token"], self._options, self._clock.now_ms())
        except TokenValidationError as e:
            status = "insufficient_scope" if e.scope is not None else "invalid_token"
            self._error_message = json_error_response(status, e.scope)
            return self._error_message.encode("utf-8"), False
        authorization_id = match["authzid"] or ""
        if authorization_id and authorization_id != jws.principal_name:
            raise SaslAuthenticationError(
                f"Authentication failed: Client requested an authorization id ({authorization_id}) that is "
                f"different from the token's principal name ({jws.principal_name})")
        self.token = jws
        self.extensions = properties
        self._complete_as(jws.principal_name)
        return b"", True
