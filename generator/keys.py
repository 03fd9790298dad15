"""Parsing observation keys (see generator.worker.observe) into their parts.

`3/0:total` is statement 3, variable 0, then the property `total`; `2/2['a:b']@len` is
statement 2's own result, its item `'a:b'`, then `len()`. Item keys are Python literals
and may contain any character, so keys are tokenized, never matched with a regex.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Literal

TokenKind = Literal["attr", "property", "call", "item", "wrap"]
_NAME = re.compile(r"[A-Za-z_]\w*")
OBSERVER_KINDS = frozenset({"property", "call", "wrap"})


@dataclass(frozen=True)
class Token:
    kind: TokenKind
    text: str  # attribute name, item literal source, or wrapper name (len, list, str, repr)


@dataclass(frozen=True)
class Key:
    statement: int
    var: int | None  # None for the exception key `<statement>/!`
    tokens: tuple[Token, ...]

    @property
    def is_exception(self) -> bool:
        return self.var is None

    @property
    def observes_result(self) -> bool:
        return self.var == self.statement

    @property
    def through_observer(self) -> bool:
        return any(t.kind in OBSERVER_KINDS for t in self.tokens)

    @property
    def suffix(self) -> str:
        """The key without its statement and variable numbers (for grouping)."""
        return "".join(_token_source(t) for t in self.tokens)


def parse_key(key: str) -> Key:
    statement, _, rest = key.partition("/")
    if rest == "!":
        return Key(int(statement), None, ())
    digits = len(rest) - len(rest.lstrip("0123456789"))
    return Key(int(statement), int(rest[:digits]), tuple(tokenize(rest[digits:])))


def tokenize(suffix: str) -> list[Token]:
    tokens, position = [], 0
    while position < len(suffix):
        token, length = _next_token(suffix[position:])
        tokens.append(token)
        position += length
    return tokens


def _next_token(text: str) -> tuple[Token, int]:
    head = text[0]
    if head == "@":
        name = _NAME.match(text, 1)
        if name:
            return Token("wrap", name.group(0)), name.end()
    elif head in ".:":
        name = _NAME.match(text, 1)
        if name:
            if head == ":":
                return Token("property", name.group(0)), name.end()
            if text.startswith("()", name.end()):
                return Token("call", name.group(0)), name.end() + 2
            return Token("attr", name.group(0)), name.end()
    elif head == "[":
        for end in range(2, len(text) + 1):
            if text[end - 1] == "]":
                try:
                    ast.literal_eval(text[1:end - 1])
                except (ValueError, SyntaxError):
                    continue
                return Token("item", text[1:end - 1]), end
    raise ValueError(f"cannot parse observation key suffix {text!r}")


def _token_source(token: Token) -> str:
    return {"attr": f".{token.text}", "property": f":{token.text}", "call": f".{token.text}()",
            "item": f"[{token.text}]", "wrap": f"@{token.text}"}[token.kind]
