"""Structured strings: the small languages real changes hide behind, built from their grammars.

Random text and mined constants rarely spell a format specification with a thousands separator
(`{:,d}`), an ISO-8601 time without its second colon (`"12:3045"`), or a string with a character
that Unicode case folding turns into ASCII (`"ſ"` folds to `"s"`). This module builds such
strings: format specifications by the format-specification mini-language, `strftime` patterns
and ISO-8601 dates, times and durations in their complete and partial shapes, URLs in the
shapes validators disagree on (`"http://:pass@example.com"`, empty user info), and Unicode
variants of a given string (non-ASCII digits, case-folding characters, full-width forms,
combining marks). The value generator mixes them into its strings; impurity applies the Unicode
variants as one more kind of edit.
"""

from __future__ import annotations

import functools
import random
import re

_FILLS = ("", "", "", "*", "0", " ", "_")
_ALIGNS = ("", "", "<", ">", "^", "=")
_SIGNS = ("", "", "+", "-", " ")
_GROUPINGS = ("", "", ",", "_")
_TYPES = ("", "d", "n", "x", "X", "o", "b", "c", "e", "E", "f", "F", "g", "G", "%", "s")
_STRFTIME = ("%Y-%m-%d", "%H:%M:%S", "%Y-%m-%dT%H:%M:%S%z", "%d/%m/%Y", "%m/%d/%y %I:%M %p", "%a, %d %b %Y",
             "%j", "%U", "%G-W%V-%u", "%Y%m%d", "%H%M%S", "%f", "%%", "%Z", "%c", "%x", "%X", "%s")
_ISO = ("2024-02-29", "20240229", "2024-060", "2024-W09-4", "2024-W09", "2024-02", "2024",
        "12:30", "12:30:45", "12:30:45.123", "12:30:45.123456", "123045", "1230", "12:3045", "1230:45",
        "12", "2024-02-29T12:30:45", "2024-02-29T12:30:45Z", "2024-02-29T12:30:45+01:00",
        "2024-02-29T12:30:45+0100", "2024-02-29T12:30:45.45", "2024-02-29 12:30:45.123456",
        "2024-02-29T12:30:45.5Z", "2024-02-29T12:30:45.123+01:00",
        "2024-02-29 12:30", "2024-02-29T24:00:00", "2024-02-29T12:30:45,5", "T12:30", "12:30:45-05",
        "P1D", "PT1H30M", "P1Y2M3DT4H5M6S", "PT0.5S", "P2W", "-PT1H", "P1DT")
# Characters that look like, or fold, normalize or compare like, ASCII ones.
_LOOKALIKES = {
    "0": "٠０𝟘", "1": "١１𝟙", "2": "٢２", "3": "٣３", "5": "५５", "7": "७７", "9": "９",
    "s": "ſ", "k": "K", "K": "K", "i": "ıİ", "a": "ａ", "A": "Ａ", "e": "é", "-": "‐−－", " ": "\u00a0\u2009",
    ".": "．", ":": "：", "/": "／",
}
_COMBINING = ("\u0301", "\u0308", "\u0327", "\u200d")
# URLs in the shapes validators and parsers disagree on (RFC 3986): empty or encoded user info,
# ports, IP literals, IDNA hosts, relative and scheme-only forms.
_URLS = ("http://example.com", "https://example.com:8080/a/b?q=1&r=2#frag", "http://user:pass@example.com/",
         "http://:pass@example.com", "http://user@example.com", "http://user:@example.com",
         "http://us%40er:p%3Ass@example.com", "http://a@b@example.com", "ftp://foo:bar@ftp.example.org/",
         "http://[::1]:80/", "http://127.0.0.1/", "http://localhost:8000", "http://example.com:99999",
         "http://xn--bcher-kva.example/", "http://example.com/a%20b", "http://ex ample.com",
         "//example.com/path", "mailto:user@example.com", "file:///etc/hosts", "example.com",
         "http://example", "HTTP://EXAMPLE.COM/")
_URL_HINTS = ("://", "www.", "http", "url", "@")  # in a seed string: the code handles URLs
_URL_WORDS = frozenset({"url", "urls", "uri", "uris", "href", "link", "links"})


def format_spec(rng: random.Random) -> str:
    """A specification of the format mini-language:
    [[fill]align][sign][#][0][width][grouping][.precision][type]."""
    align = rng.choice(_ALIGNS)
    fill = rng.choice(_FILLS) if align else ""
    width = rng.choice(("", "", "1", "5", "10", "020"))
    precision = rng.choice(("", "", ".0", ".2", ".10"))
    return (f"{fill}{align}{rng.choice(_SIGNS)}{rng.choice(('', '#'))}{rng.choice(('', '', '0'))}"
            f"{width}{rng.choice(_GROUPINGS)}{precision}{rng.choice(_TYPES)}")


def temporal(rng: random.Random) -> str:
    """A strftime pattern or an ISO-8601 date, time, timestamp or duration (whole or partial)."""
    return rng.choice(_STRFTIME) if rng.random() < 0.3 else rng.choice(_ISO)


def unicode_variant(text: str, rng: random.Random) -> str:
    """`text` with one character replaced by a Unicode look-alike (a non-ASCII digit, a case-folding
    letter, a full-width form) or followed by a combining mark; unchanged text gets one appended."""
    positions = [i for i, char in enumerate(text) if char in _LOOKALIKES]
    if positions and rng.random() < 0.8:
        i = rng.choice(positions)
        return text[:i] + rng.choice(_LOOKALIKES[text[i]]) + text[i + 1:]
    if text and rng.random() < 0.5:
        i = rng.randrange(len(text))
        return text[: i + 1] + rng.choice(_COMBINING) + text[i + 1:]
    return text + rng.choice("ſK٣０")


def url(rng: random.Random) -> str:
    """A URL in one of the shapes above."""
    return rng.choice(_URLS)


@functools.lru_cache(maxsize=4096)  # asked for every text argument: the same few names again
def speaks_of_urls(*names: str) -> bool:
    """An operation or parameter named for URLs (`URL.__call__`, `validate_uri`, `href`)."""
    words = {word.lower() for name in names for word in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+", name)}
    return bool(words & _URL_WORDS)


def structured(rng: random.Random, seed_text: str) -> str:
    """One of the kinds above; the Unicode variant is of `seed_text` (a mined constant, say).
    A seed that speaks of URLs (`"://"`, `"http"`) makes a URL likely."""
    roll = rng.random()
    if any(hint in seed_text.lower() for hint in _URL_HINTS) and roll < 0.6:
        return rng.choice(_URLS)
    if roll < 0.3:
        return format_spec(rng)
    if roll < 0.65:
        return temporal(rng)
    if roll < 0.75:
        return rng.choice(_URLS)
    return unicode_variant(seed_text, rng)
