"""The principal Kafka gives an SSL client: the subject of its certificate through `ssl.principal.mapping.rules`.

As DefaultKafkaPrincipalBuilder does for an SslAuthenticationContext: no certificate is `User:ANONYMOUS`;
otherwise the subject DN as Java's X500Principal.getName() renders it (RFC 2253, read here from the DER
without a certificate library) is mapped by SslPrincipalMapper's rules. No sockets here: the listener hands
the peer's certificate (`SSLObject.getpeercert(binary_form=True)`) to `principal_from_certificate`.
Reading the `ssl.*` stores into a server context is tls.py's.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

ANONYMOUS: Final = "User:ANONYMOUS"  # KafkaPrincipal.ANONYMOUS: a client that sent no certificate
DEFAULT_PRINCIPAL_MAPPING_RULES: Final = "DEFAULT"  # BrokerSecurityConfigs.DEFAULT_SSL_PRINCIPAL_MAPPING_RULES


class PrincipalMappingError(ValueError):
    """A client certificate's subject cannot be mapped through `ssl.principal.mapping.rules` (Kafka then fails the
    authentication and closes the connection)."""


def principal_from_certificate(der_cert: bytes | None, rules: str | None = DEFAULT_PRINCIPAL_MAPPING_RULES) -> str:
    """Kafka's principal for an SSL client: `User:ANONYMOUS` without a certificate, else `User:` + the mapped subject.

    As DefaultKafkaPrincipalBuilder: the subject DN as Java renders it (`subject_dn`) through
    `ssl.principal.mapping.rules`. Raises TlsConfigError for bad rules, PrincipalMappingError when none applies.
    """
    if der_cert is None:
        return ANONYMOUS
    dn = subject_dn(der_cert)
    try:
        return "User:" + _principal_mapper(rules).get_name(dn)
    except NoMatchingRule as e:
        raise PrincipalMappingError(f"Failed to map name for '{dn}' based on SSL principal mapping rules. {e}") from e


@functools.lru_cache(maxsize=32)
def _principal_mapper(rules: str | None) -> SslPrincipalMapper:
    return SslPrincipalMapper(rules)


# X500Principal.getName() (RFC 2253): keywords only for these attribute types (AVAKeyword's
# rfc2253Compliant set); any other type, emailAddress included, is its dotted OID with the value in hex.
_RFC2253_KEYWORDS: Final = {
    "2.5.4.3": "CN",
    "2.5.4.6": "C",
    "2.5.4.7": "L",
    "2.5.4.8": "ST",
    "2.5.4.10": "O",
    "2.5.4.11": "OU",
    "2.5.4.9": "STREET",
    "0.9.2342.19200300.100.1.25": "DC",
    "0.9.2342.19200300.100.1.1": "UID",
}
# AVA.isDerString(value, false): PrintableString, T61String, IA5String, GeneralString, BMPString, UTF8String
_STRING_TAGS: Final = frozenset({0x13, 0x14, 0x16, 0x1B, 0x1E, 0x0C})
_ESCAPED: Final = frozenset(',=+<>#;"\\')  # AVA.toRFC2253String escapes these anywhere in a value


def subject_dn(der_cert: bytes) -> str:
    """A certificate's subject as Java's X500Principal.getName() gives it: RFC 2253, last RDN first."""
    try:
        rdns = []
        for _, _, set_start, set_end in _der_children(der_cert, *_subject_name_der(der_cert)):
            # a multi-valued RDN keeps its encoded order, joined with '+' (RDN.toRFC2253String)
            attributes = _der_children(der_cert, set_start, set_end)
            rdns.append("+".join(_rfc2253_attribute(der_cert, start, end) for _, _, start, end in attributes))
    except (IndexError, ValueError) as e:
        raise ValueError(f"not a DER X.509 certificate: {e}") from e
    return ",".join(reversed(rdns))


def _subject_name_der(der: bytes) -> tuple[int, int]:
    """Contents span of the subject Name inside Certificate.tbsCertificate."""
    _, _, cert_start, cert_end = _der_element(der, 0)
    _, _, tbs_start, tbs_end = _der_element(der, cert_start)
    fields = list(_der_children(der, tbs_start, tbs_end))
    first = 1 if fields[0][0] == 0xA0 else 0  # [0] EXPLICIT version, absent in v1 certificates
    # serialNumber, signature, issuer, validity, subject
    tag, _, start, end = fields[first + 4]
    if tag != 0x30:
        raise ValueError("subject is not a SEQUENCE")
    return start, end


def _rfc2253_attribute(der: bytes, start: int, end: int) -> str:
    """One AttributeTypeAndValue as AVA.toRFC2253String renders it."""
    children = list(_der_children(der, start, end))
    if len(children) != 2:
        raise ValueError("AttributeTypeAndValue is not a (type, value) pair")
    (oid_tag, _, oid_start, oid_end), (value_tag, value_offset, value_start, value_end) = children
    if oid_tag != 0x06:
        raise ValueError("attribute type is not an OBJECT IDENTIFIER")
    oid = _oid_text(der[oid_start:oid_end])
    keyword = _RFC2253_KEYWORDS.get(oid)
    if keyword is None or value_tag not in _STRING_TAGS:
        return f"{keyword or oid}=#{der[value_offset:value_end].hex()}"
    # Java decodes the bytes of every string type as UTF-8 (a BMPString too)
    text = der[value_start:value_end].decode("utf-8", "replace")
    escaped = "".join("\\" + c if c in _ESCAPED else "\\00" if c == "\x00" else c for c in text)
    # then each leading and trailing space or carriage return gets a backslash too
    lead = len(escaped) - len(escaped.lstrip(" \r"))
    trail = len(escaped.rstrip(" \r")) if lead < len(escaped) else len(escaped)
    return (
        f"{keyword}="
        + "".join("\\" + c for c in escaped[:lead])
        + escaped[lead:trail]
        + "".join("\\" + c for c in escaped[max(lead, trail) :])
    )


def _der_element(der: bytes, offset: int) -> tuple[int, int, int, int]:
    """(tag, offset, contents start, end) of the DER element at `offset`."""
    if offset + 2 > len(der):
        raise ValueError("truncated")
    tag, length = der[offset], der[offset + 1]
    if tag & 0x1F == 0x1F:
        raise ValueError("multi-byte tag")
    start = offset + 2
    if length & 0x80:
        size = length & 0x7F
        if size == 0 or size > 4:
            raise ValueError("unsupported length")
        length = int.from_bytes(der[start : start + size], "big")
        start += size
    end = start + length
    if end > len(der):
        raise ValueError("truncated")
    return tag, offset, start, end


def _der_children(der: bytes, start: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    offset = start
    while offset < end:
        element = _der_element(der, offset)
        if element[3] > end:
            raise ValueError("element overruns its parent")
        yield element
        offset = element[3]


def _oid_text(body: bytes) -> str:
    arcs: list[int] = []
    value = 0
    for byte in body:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            arcs.append(value)
            value = 0
    if not arcs:
        raise ValueError("empty OBJECT IDENTIFIER")
    first = min(arcs[0] // 40, 2)
    return ".".join(str(arc) for arc in (first, arcs[0] - 40 * first, *arcs[1:]))


# --- ssl.principal.mapping.rules (SslPrincipalMapper) -------------------------------------------------------------

# The rule grammar of SslPrincipalMapper: DEFAULT, or RULE:pattern/replacement/ with an optional L or U,
# `\` escaping a `/` or `\` inside pattern and replacement. Rules are separated by commas; the splitter
# and the parser are the same expressions Kafka uses, so odd inputs split as they do in Kafka.
_RULE: Final = r"(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_RULE_SPLITTER: Final = re.compile(r"\s*(" + _RULE + r")\s*(,\s*|$)", re.ASCII)
_RULE_PARSER: Final = re.compile(_RULE, re.ASCII)
# Java spells named groups (?<name>...) and back references \k<name>; Python wants (?P<name>...), (?P=name)
_JAVA_NAMED_GROUP: Final = re.compile(r"(?<!\\)((?:\\\\)*)\(\?<([A-Za-z][A-Za-z0-9]*)>")
_JAVA_NAMED_REFERENCE: Final = re.compile(r"(?<!\\)((?:\\\\)*)\\k<([A-Za-z][A-Za-z0-9]*)>")
_JAVA_TRIM: Final = "".join(chr(c) for c in range(0x21))  # String.trim() drops every char <= ' '


class NoMatchingRule(LookupError):
    """No rule of an SslPrincipalMapper gives a name for a distinguished name."""


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str] | None  # None: DEFAULT
    java_pattern: str = ""
    replacement: str = ""
    to_lower_case: bool = False
    to_upper_case: bool = False

    def apply(self, distinguished_name: str) -> str | None:
        if self.pattern is None:
            return distinguished_name
        if self.pattern.fullmatch(distinguished_name) is None:
            return None
        groups = self.pattern.groups
        result = self.pattern.sub(lambda m: _java_replacement(m, self.replacement, groups), distinguished_name)
        if self.to_lower_case:
            return result.lower()
        if self.to_upper_case:
            return result.upper()
        return result

    def __str__(self) -> str:
        if self.pattern is None:
            return "DEFAULT"
        flag = "/L" if self.to_lower_case else "/U" if self.to_upper_case else ""
        return f"RULE:{self.java_pattern}/{self.replacement}{flag}"


class SslPrincipalMapper:
    """`ssl.principal.mapping.rules`: the first rule that matches a DN gives the name (TlsConfigError if invalid)."""

    def __init__(self, rules: str | None = DEFAULT_PRINCIPAL_MAPPING_RULES) -> None:
        text = (rules if rules is not None else DEFAULT_PRINCIPAL_MAPPING_RULES).strip(_JAVA_TRIM)
        self.rules = [rule for rule in map(_parse_rule, _split_rules(text)) if rule is not None]

    def get_name(self, distinguished_name: str) -> str:
        """The short name for a DN (RFC 2253, as `subject_dn` renders it); raises NoMatchingRule."""
        for rule in self.rules:
            name = rule.apply(distinguished_name)
            if name is not None:
                return name
        raise NoMatchingRule(f"No rules apply to {distinguished_name}, rules [{', '.join(map(str, self.rules))}]")

    def __str__(self) -> str:
        return f"SslPrincipalMapper(rules = [{', '.join(map(str, self.rules))}])"


def _split_rules(text: str) -> list[str]:
    rules: list[str] = []
    position = 0
    # Matcher.find(): after an empty match the next search starts one character further on
    while position <= len(text):
        match = _RULE_SPLITTER.search(text, position)
        if match is None:
            break
        rules.append(match.group(1))
        position = match.end() + (1 if match.end() == match.start() else 0)
    return rules


def _parse_rule(rule: str) -> _Rule | None:
    from .tls import TlsConfigError  # here: tls.py imports cryptography, which a PLAINTEXT listener never needs

    match = _RULE_PARSER.match(rule)  # lookingAt()
    if match is None:
        raise TlsConfigError("ssl.principal.mapping.rules", f"Invalid rule: {rule}")
    if match.end() != len(rule):
        raise TlsConfigError(
            "ssl.principal.mapping.rules",
            f"Invalid rule: `{rule}`, unmatched substring: `{rule[match.end() :]}`",
        )
    if match.group(1) is not None:
        return _Rule(None)
    if match.group(2) is None:
        return None  # an empty rule is ignored
    java_pattern = match.group(2)
    python_pattern = _JAVA_NAMED_REFERENCE.sub(r"\1(?P=\2)", _JAVA_NAMED_GROUP.sub(r"\1(?P<\2>", java_pattern))
    try:
        pattern = re.compile(python_pattern)
    except re.error as e:
        raise TlsConfigError(
            "ssl.principal.mapping.rules", f"Invalid rule: `{rule}`: bad regular expression {java_pattern!r} ({e})"
        ) from e
    return _Rule(pattern, java_pattern, match.group(4), match.group(6) == "L", match.group(6) == "U")


def _java_replacement(match: re.Match[str], replacement: str, group_count: int) -> str:
    """Matcher.appendReplacement's reading of a replacement: `$n`, `${name}`, `\\x` for a literal x.

    Kafka first turns a `$n` whose group does not exist into a literal (escapeLiteralBackReferences,
    which it took from Apache NiFi), when the pattern has groups at all: so does this. Kafka's version
    mis-places the escape when two or more references are out of range; this one escapes each.
    """
    out: list[str] = []
    i = 0
    while i < len(replacement):
        char = replacement[i]
        if char == "\\":
            if i + 1 == len(replacement):
                raise PrincipalMappingError(f"character to be escaped is missing in replacement {replacement!r}")
            out.append(replacement[i + 1])
            i += 2
        elif char == "$":
            i += 1
            if i == len(replacement):
                raise PrincipalMappingError(f"Illegal group reference: group index is missing in {replacement!r}")
            if replacement[i] == "{":
                close = replacement.find("}", i)
                if close < 0:
                    raise PrincipalMappingError(f"named capturing group is missing trailing '}}' in {replacement!r}")
                group_name = replacement[i + 1 : close]
                try:
                    out.append(match.group(group_name) or "")
                except IndexError as e:
                    raise PrincipalMappingError(f"No group with name {{{group_name}}}") from e
                i = close + 1
                continue
            if not "0" <= replacement[i] <= "9":
                raise PrincipalMappingError(f"Illegal group reference in {replacement!r}")
            reference = int(replacement[i])
            if group_count > 0 and reference > group_count:
                out.append("$")  # escapeLiteralBackReferences: a reference to a group that does not exist is text
                continue
            i += 1
            # further digits extend the number while it still names a group
            while i < len(replacement) and "0" <= replacement[i] <= "9":
                extended = reference * 10 + int(replacement[i])
                if extended > group_count:
                    break
                reference = extended
                i += 1
            if reference > group_count:
                raise PrincipalMappingError(f"No group {reference}")
            out.append(match.group(reference) or "")
        else:
            out.append(char)
            i += 1
    return "".join(out)
