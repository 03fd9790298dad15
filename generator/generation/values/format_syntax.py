"""The comment syntax and escapes of the small languages test inputs are written in.

A test's input is often a text in some format: markup, an INI or TOML file, an SQL statement, an
e-mail address, a URL, a date-time. Real inputs in that format carry what the format's grammar
allows and the test's one example does not: a comment between two elements, an entity or a
percent-escape for a plain character, a quoted local part, a zone designator. A change to a parser
or a formatter often shows only there. Each format is one entry of FORMATS: how a text is told to
be in it, and the edits its grammar allows (an insertion at a place the grammar puts it, or a
replacement). Nothing here comes from any project: the pieces are the formats' own syntax.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

Edit = Callable[[str, random.Random], "str | None"]


def _insert_at(pattern: str, piece: str | tuple[str, ...], after: bool = True) -> Edit:
    """Insert `piece` (one of them, chosen) after (or before) a match of `pattern`, chosen."""
    compiled = re.compile(pattern)

    def edit(text: str, rng: random.Random) -> str | None:
        places = [match.end() if after else match.start() for match in compiled.finditer(text)]
        if not places:
            return None
        at = rng.choice(places)
        chosen = piece if isinstance(piece, str) else rng.choice(piece)
        return text[:at] + chosen + text[at:]

    return edit


def _replace(pattern: str, replacement: Callable[[re.Match[str], random.Random], str]) -> Edit:
    """Replace one match of `pattern`, chosen, by what `replacement` makes of it."""
    compiled = re.compile(pattern)

    def edit(text: str, rng: random.Random) -> str | None:
        matches = list(compiled.finditer(text))
        if not matches:
            return None
        match = rng.choice(matches)
        return text[:match.start()] + replacement(match, rng) + text[match.end():]

    return edit


def _char_reference(match: re.Match[str], rng: random.Random) -> str:
    char = match.group(0)
    return rng.choice((f"&#{ord(char)};", f"&#x{ord(char):x};"))


def _percent_escape(match: re.Match[str], rng: random.Random) -> str:
    return "".join(f"%{byte:02X}" for byte in match.group(0).encode("utf-8"))


def _quote_local_part(match: re.Match[str], rng: random.Random) -> str:
    return f'"{match.group(1)}"@'


def _doubled_quote(match: re.Match[str], rng: random.Random) -> str:
    return match.group(0) + match.group(0)


def _time_separator(match: re.Match[str], rng: random.Random) -> str:
    return " " if match.group(0) in "Tt" else "T"


@dataclass(frozen=True)
class Format:
    """A small language: how a text is told to be in it, and the edits its grammar allows."""

    name: str
    looks_like: re.Pattern[str]
    edits: tuple[Edit, ...]


FORMATS: tuple[Format, ...] = (
    Format("markup", re.compile(r"<[A-Za-z!/?][^<>]*>"), (
        _insert_at(r">", ("<!-- -->", "<!---->", "<![CDATA[]]>")),  # a comment or CDATA between elements
        _insert_at(r"<[A-Za-z][\w:.-]*", (" ", "\n", "\t")),  # space inside a start tag
        _replace(r"(?<=>)[^<>&\s]", _char_reference),  # a character of the content as a reference
        _replace(r"&(?![#\w]+;)", lambda match, rng: "&amp;"),
        _replace(r"(?<==)\"([^\"]*)\"", lambda match, rng: f"'{match.group(1)}'"),  # quotes of a value
    )),
    Format("ini", re.compile(r"(?m)^[ \t]*(?:\[[^\]\n]+\][ \t]*$|[\w.\"'-]+[ \t]*=)"), (
        _insert_at(r"(?m)(?<=\S)$", (" # comment", " ; comment", "  #")),  # a comment at a line's end
        _insert_at(r"(?m)^", ("# comment\n", "; comment\n", "\n"), after=False),  # a comment line
        _insert_at(r"(?m)^[ \t]*[\w.-]+(?=[ \t]*=)", (" ", "\t")),  # space before the =
        _replace(r"(?m)(?<==)[ \t]*([^\s\"'#;][^\n#;]*?)[ \t]*$",
                 lambda match, rng: f' "{match.group(1)}"'),  # a value quoted
    )),
    Format("sql", re.compile(r"(?i)\b(?:select|insert|update|delete|create|alter|drop|from|where|values)\b"),
           (
        _insert_at(r"[ \t]", ("/* comment */ ", "/**/")),
        _insert_at(r"$", (" -- comment", "--", ";", " ;")),
        _insert_at(r"(?m)[ \t](?=\S)", "-- comment\n"),
        _replace(r"'", _doubled_quote),  # a quote escaped inside a string (or a string ended)
    )),
    Format("email", re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"), (
        _replace(r"([\w.+-]+)@", _quote_local_part),
        _insert_at(r"@", "(comment)", after=False),  # an RFC 5322 comment
        _replace(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", lambda match, rng: f"Name <{match.group(0)}>"),
        _insert_at(r"[\w-]+(?:\.[\w-]+)+$", "."),  # the root's trailing dot
    )),
    Format("url", re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://|^/[^\s]*[?=/]"), (
        _replace(r"(?<=[/=&?])[A-Za-z0-9._~-]", _percent_escape),  # a plain character percent-escaped
        _insert_at(r"$", ("#", "#fragment", "?", "?q=1", "&q=1", "/")),
        _insert_at(r"://[^/\s]+", "/", after=True),  # a doubled slash after the authority
        _replace(r"%[0-9A-F]{2}", lambda match, rng: match.group(0).lower()),
        _replace(r"(?i)^[a-z]+(?=://)", lambda match, rng: match.group(0).upper()),
    )),
    Format("datetime", re.compile(r"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}"), (
        _replace(r"(?<=\d)[Tt ](?=\d{1,2}:)", _time_separator),
        _insert_at(r"\d{1,2}:\d{2}:\d{2}(?![\d.,])", (".000", ".5", ",5", ".000001")),  # a fraction
        _insert_at(r"\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?(?![\d:.,+Zz-])",
                   ("Z", "+00:00", "-05:30", "+0000", " UTC")),  # a zone
        _replace(r"(?<=\d)[Zz]$", lambda match, rng: "+00:00"),
    )),
)


def format_edit(text: str, rng: random.Random) -> str | None:
    """One edit of `text` that the grammar of a format it is in allows (None: it is in none, or no
    edit of its formats applies)."""
    formats = [form for form in FORMATS if form.looks_like.search(text)]
    edits = [edit for form in formats for edit in form.edits]
    for edit in rng.sample(edits, len(edits)):
        edited = edit(text, rng)
        if edited is not None and edited != text:
            return edited
    return None
