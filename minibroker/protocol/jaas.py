"""Kafka's `sasl.jaas.config` grammar, read as org.apache.kafka.common.security.JaasConfig reads it.

    <loginModuleClass> <controlFlag> (<optionName>=<optionValue>)*;

JaasConfig hands the text to a java.io.StreamTokenizer with its default syntax, plus `-`, `_`
and `$` as word characters and `//`, `/* */` comments. That tokenizer decides what a user can
write, so it is modelled here rule by rule (and checked against Kafka's own class in
tests/unit/test_sasl.py):

- a word starts with a letter, `_`, `$` or a character from 160 up, and goes on through
  letters, digits, `.`, `-`, `_` and `$` (so module class names need no quotes);
- a token starting with a digit, `.` or `-` is a number, which has no text: `a=1`, `a=-x` and
  `a=.5` are refused ("Value not specified for key 'a'"); values like that must be quoted;
- `"` and `'` quote a value; inside, a backslash escapes (`\\"`, `\\\\`, `\\n`, `\\t`, octal
  `\\101`...), and a line end or the end of the text ends the value (no error);
- `/` starts a comment, even right after a word: `//` and a lone `/` run to the end of the line,
  `/* */` is a block comment;
- bytes 0-32 are white space; any other character (`;`, `=`, `+`, `@`, `:`, 127-159...) is a
  token of its own, without text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

TT_EOF = -1
TT_NUMBER = -2
TT_WORD = -3
_NEED_CHAR = 0x7FFFFFFF

_WHITESPACE = 1
_DIGIT = 2
_ALPHA = 4
_QUOTE = 8
_COMMENT = 16


def _character_types() -> list[int]:
    """StreamTokenizer's default table, then JaasConfig's wordChars('-'), ('_') and ('$')."""
    types = [0] * 256
    for c in (*range(ord("a"), ord("z") + 1), *range(ord("A"), ord("Z") + 1), *range(128 + 32, 256)):
        types[c] |= _ALPHA
    for c in range(0, 33):
        types[c] = _WHITESPACE
    types[ord("/")] = _COMMENT
    types[ord('"')] = _QUOTE
    types[ord("'")] = _QUOTE
    for c in (*range(ord("0"), ord("9") + 1), ord("."), ord("-")):  # parseNumbers()
        types[c] |= _DIGIT
    for c in "-_$":
        types[ord(c)] |= _ALPHA
    return types


_TYPES = _character_types()
_ESCAPES = {"a": 0x07, "b": 0x08, "f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B}


class _Tokenizer:
    """java.io.StreamTokenizer as JaasConfig sets it up (default syntax, a few more word characters, comments)."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._position = 0
        self._peek = _NEED_CHAR
        self.ttype = 0
        self.sval: str | None = None

    def _read(self) -> int:
        if self._position >= len(self._text):
            return -1
        c = ord(self._text[self._position])
        self._position += 1
        return c

    @staticmethod
    def _type(c: int) -> int:
        return _TYPES[c] if c < 256 else _ALPHA

    def next_token(self) -> int:
        self.sval = None
        c = self._peek
        if c < 0:
            c = _NEED_CHAR
        if c == _NEED_CHAR:
            c = self._read()
            if c < 0:
                self.ttype = TT_EOF
                return TT_EOF
        self.ttype = c
        self._peek = _NEED_CHAR

        ctype = self._type(c)
        while ctype & _WHITESPACE:
            c = self._read()
            if c < 0:
                self.ttype = TT_EOF
                return TT_EOF
            ctype = self._type(c)

        if ctype & _DIGIT:
            return self._number(c)

        if ctype & _ALPHA:
            chars = []
            while True:
                chars.append(chr(c))
                c = self._read()
                ctype = _WHITESPACE if c < 0 else self._type(c)
                if not ctype & (_ALPHA | _DIGIT):
                    break
            self._peek = c
            self.sval = "".join(chars)
            self.ttype = TT_WORD
            return TT_WORD

        if ctype & _QUOTE:
            return self._quoted(c)

        if c == ord("/"):
            return self._comment()

        self.ttype = c
        return c

    def _number(self, c: int) -> int:
        # the value itself (StreamTokenizer.nval) is of no use to JaasConfig: only that sval is null
        if c == ord("-"):
            c = self._read()
            if c != ord(".") and not ord("0") <= c <= ord("9"):
                self._peek = c
                self.ttype = ord("-")
                return self.ttype
        seen_dot = False
        while (c == ord(".") and not seen_dot) or ord("0") <= c <= ord("9"):
            seen_dot = seen_dot or c == ord(".")
            c = self._read()
        self._peek = c
        self.ttype = TT_NUMBER
        return TT_NUMBER

    def _quoted(self, quote: int) -> int:
        self.ttype = quote
        chars = []
        d = self._read()
        while d >= 0 and d != quote and d not in (0x0A, 0x0D):
            if d == ord("\\"):
                c = self._read()
                first = c
                if ord("0") <= c <= ord("7"):
                    c = c - ord("0")
                    c2 = self._read()
                    if ord("0") <= c2 <= ord("7"):
                        c = (c << 3) + (c2 - ord("0"))
                        c2 = self._read()
                        if ord("0") <= c2 <= ord("7") and first <= ord("3"):
                            c = (c << 3) + (c2 - ord("0"))
                            d = self._read()
                        else:
                            d = c2
                    else:
                        d = c2
                else:
                    if c >= 0 and chr(c) in _ESCAPES:
                        c = _ESCAPES[chr(c)]
                    d = self._read()
            else:
                c = d
                d = self._read()
            # a backslash at the very end stores Java's (char) -1
            chars.append(chr(c) if c >= 0 else "\uffff")
        self._peek = _NEED_CHAR if d == quote else d
        self.sval = "".join(chars)
        return quote

    def _comment(self) -> int:
        c = self._read()
        if c == ord("*"):
            previous = 0
            while True:
                c = self._read()
                if c == ord("/") and previous == ord("*"):
                    break
                # StreamTokenizer skips the character after a line end without comparing it to '/'
                if c == 0x0D:
                    c = self._read()
                    if c == 0x0A:
                        c = self._read()
                elif c == 0x0A:
                    c = self._read()
                if c < 0:
                    self.ttype = TT_EOF
                    return TT_EOF
                previous = c
            return self.next_token()
        # '//' and a lone '/' (the comment character) both run to the end of the line
        while c >= 0 and c not in (0x0A, 0x0D):
            c = self._read()
        self._peek = c
        return self.next_token()


class JaasConfigError(ValueError):
    """A `sasl.jaas.config` value Kafka refuses; the message is Kafka's."""


CONTROL_FLAGS = ("REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL")


@dataclass(frozen=True, slots=True)
class JaasEntry:
    """One login module of a JAAS configuration: its class name, control flag and options."""

    login_module: str
    control_flag: str
    options: Mapping[str, str] = field(default_factory=dict)


def _entry(tokenizer: _Tokenizer) -> JaasEntry:
    login_module = tokenizer.sval
    if tokenizer.next_token() == TT_EOF:
        raise JaasConfigError("Login module control flag not specified in JAAS config")
    flag = tokenizer.sval
    if flag is None:
        raise JaasConfigError("Login module control flag is not available in the JAAS config")
    if flag.upper() not in CONTROL_FLAGS:
        raise JaasConfigError(f"Invalid login module control flag '{flag}' in JAAS config")
    options: dict[str, str] = {}
    while tokenizer.next_token() != TT_EOF and tokenizer.ttype != ord(";"):
        # a number or a lone character such as '=' is a token without text: Java names the option null
        key = tokenizer.sval if tokenizer.sval is not None else "null"
        if tokenizer.next_token() != ord("=") or tokenizer.next_token() == TT_EOF or tokenizer.sval is None:
            raise JaasConfigError(f"Value not specified for key '{key}' in JAAS config")
        options[key] = tokenizer.sval
    if tokenizer.ttype != ord(";"):
        raise JaasConfigError("JAAS config entry not terminated by semi-colon")
    if not login_module:
        # javax.security.auth.login.AppConfigurationEntry refuses it (with no message)
        raise JaasConfigError("Login module name not specified in JAAS config")
    return JaasEntry(login_module, flag.upper(), options)


def parse_jaas_config(text: str) -> list[JaasEntry]:
    """Every login module of a `sasl.jaas.config` value, in order (JaasConfig's parser)."""
    tokenizer = _Tokenizer(text)
    entries = []
    while tokenizer.next_token() != TT_EOF:
        entries.append(_entry(tokenizer))
    if not entries:
        raise JaasConfigError("Login module not specified in JAAS config")
    return entries


def load_server_jaas(text: str) -> JaasEntry:
    """The single login module a listener's `<mechanism>.sasl.jaas.config` must hold (JaasContext.load)."""
    entries = parse_jaas_config(text)
    if len(entries) != 1:
        raise JaasConfigError(f"JAAS config property contains {len(entries)} login modules, should be 1 module")
    return entries[0]
