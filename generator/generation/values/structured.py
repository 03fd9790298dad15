"""Structured strings: the small languages real changes hide behind, built from their grammars.

Random text and mined constants rarely spell a format specification with a thousands separator
(`{:,d}`), an ISO-8601 time without its second colon (`"12:3045"`), or a string with a character
that Unicode case folding turns into ASCII (`"ſ"` folds to `"s"`). This module builds such
strings from the languages' own grammars: format specifications by the format-specification
mini-language; `strftime` patterns; ISO-8601 and RFC 3339 dates, times, timestamps and durations,
composed from the productions (a complete or reduced date, a time of minutes or seconds with a
decimal fraction of any length, an offset, "T" or the space RFC 3339 allows between them) and
their partial shapes; URLs composed from RFC 3986's components (scheme, user information with or
without its parts, host, port, path, query, fragment), whole, partial or out of range, beside the
RFC's own examples; and Unicode variants of a given string (non-ASCII digits, case-folding
characters, full-width forms, combining marks). The value generator mixes them into its strings;
impurity applies the Unicode variants as one more kind of edit. No value here comes from a
project's tests or from a benchmark's cases: only from the grammars and their standards' examples.
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
# ISO 8601 / RFC 3339 productions: calendar, ordinal and week dates, complete and reduced; times of
# minutes or seconds, basic and extended, midnight as 24:00; fractions of any length after "." or
# ","; offsets; durations; and the partial shapes parsers disagree on.
_DATES = ("2024-02-29", "20240229", "2024-060", "2024-W09-4", "2024-W09", "2024-02", "2024")
_TIMES = ("12:30", "12:30:45", "1230", "123045", "24:00:00", "00:00:00", "23:59:60")
_OFFSETS = ("", "", "Z", "+01:00", "+0100", "-05", "-05:30")
_DURATIONS = ("P1D", "PT1H30M", "P1Y2M3DT4H5M6S", "PT0.5S", "P2W", "-PT1H", "P1DT")
_PARTIAL = ("12:3045", "1230:45", "12", "T12:30", "2024-02-29T", "2024-2-29")
# Characters that look like, or fold, normalize or compare like, ASCII ones.
_LOOKALIKES = {
    "0": "٠０𝟘", "1": "١１𝟙", "2": "٢２", "3": "٣３", "5": "५５", "7": "७７", "9": "９",
    "s": "ſ", "k": "K", "K": "K", "i": "ıİ", "a": "ａ", "A": "Ａ", "e": "é", "-": "‐−－", " ": "\u00a0\u2009",
    ".": "．", ":": "：", "/": "／",
}
_COMBINING = ("\u0301", "\u0308", "\u0327", "\u200d")
# RFC 3986's examples (sections 1.1.2 and 3), and its components, from which URLs are composed
# whole or in part: user information of a user, a password, both or neither part, or percent-encoded
# ones; registered names, IP literals, IDNA hosts; ports in and out of range; paths, queries,
# fragments; relative and scheme-only references.
_RFC_3986 = ("ftp://ftp.is.co.za/rfc/rfc1808.txt", "http://www.ietf.org/rfc/rfc2396.txt",
             "ldap://[2001:db8::7]/c=GB?objectClass?one", "mailto:John.Doe@example.com",
             "news:comp.infosystems.www.servers.unix", "tel:+1-816-555-1212", "telnet://192.0.2.16:80/",
             "urn:oasis:names:specification:docbook:dtd:xml:4.1.2",
             "foo://example.com:8042/over/there?name=ferret#nose", "//example.com/path", "/a/b/c", "../g",
             "file:///etc/hosts", "example.com")
_SCHEMES = ("http", "https", "ftp", "HTTP", "ws")
_USERS = ("", "user", "us%40er", "a@b")
_PASSWORDS = (None, "", "secret", "p%3Ass")
_HOSTS = ("example.com", "EXAMPLE.COM", "www.example.com", "127.0.0.1", "[::1]", "[2001:db8::7]",
          "xn--bcher-kva.example", "localhost", "example", "ex ample.com", "")
_PORTS = ("", "", "", ":80", ":8080", ":99999", ":")
_PATHS = ("", "/", "/a/b", "/a%20b", "/over/there", "/a/../b")
_QUERIES = ("", "", "?q=1&r=2", "?name=ferret", "?")
_FRAGMENTS = ("", "", "#frag", "#")
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
    """A strftime pattern, or an ISO-8601 date, time, timestamp or duration (whole or partial)."""
    return rng.choice(_STRFTIME) if rng.random() < 0.3 else iso_8601(rng)


def iso_8601(rng: random.Random) -> str:
    """A date, a time, a timestamp, a duration or a partial shape, composed from ISO 8601's productions."""
    roll = rng.random()
    if roll < 0.1:
        return rng.choice(_DURATIONS)
    if roll < 0.2:
        return rng.choice(_PARTIAL)
    if roll < 0.35:
        return rng.choice(_DATES)
    time = _time(rng) + rng.choice(_OFFSETS)
    if roll < 0.5:
        return time
    return rng.choice(_DATES[:2]) + rng.choice(("T", "T", " ")) + time


def _time(rng: random.Random) -> str:
    """A time of day; one with seconds may have a decimal fraction of one to six digits."""
    time = rng.choice(_TIMES)
    if len(time) >= 6 and rng.random() < 0.4:
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 6)))
        time += rng.choice((".", ".", ",")) + digits
    return time


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
    """An example of RFC 3986, or a URL composed from its components."""
    if rng.random() < 0.25:
        return rng.choice(_RFC_3986)
    user, password = rng.choice(_USERS), rng.choice(_PASSWORDS)
    userinfo = "" if not user and password is None else f"{user}{'' if password is None else ':' + password}@"
    return (f"{rng.choice(_SCHEMES)}://{userinfo}{rng.choice(_HOSTS)}{rng.choice(_PORTS)}{rng.choice(_PATHS)}"
            f"{rng.choice(_QUERIES)}{rng.choice(_FRAGMENTS)}")


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
        return url(rng)
    if roll < 0.3:
        return format_spec(rng)
    if roll < 0.65:
        return temporal(rng)
    if roll < 0.75:
        return url(rng)
    return unicode_variant(seed_text, rng)
