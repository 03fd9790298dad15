"""Where the pull request's words name a difference's operation.

A difference is named by the pull request when a passage names the operation it was seen through
(`pkg.mod:Class.method`: the method, `Class.method` or its class), or the changed unit whose line
it was seen at (a changed private helper behind a public call), or when that unit's docstring
changed. Naming is evidence of intent, weaker than a test: the trap is a regression in the same
function as an intended change, so a name must be meant as one.

A passage that says its change keeps behaviour ("refactor", "simplify", "streamline RateMeter.add",
"speed up", "no functional change") explains nothing by naming: it claims no difference, so a
difference there is what it did not mean. Its subject line speaks for the whole passage.

A distinctive name (with an underscore, a digit or a capital: `parse_duration`, `RateMeter`)
counts wherever it stands as a whole word. A plain lower-case word (`parse`, `items`) is also
English, so it counts only where the text marks it as code: in backticks, called (`parse(`), or
joined to another name by a dot (`durations.parse`, `Meter.add`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .pull_request import Passage, PullRequestText

# the words of a change that claims to keep behaviour (commit conventions: refactor, perf, style)
KEEPS_BEHAVIOUR = re.compile(
    r"\b(refactor\w*|tid(y|ies|ied|ying)|clean(s|ed|ing)?[ -]?up|simplif\w+|streamlin\w+|restructur\w+|"
    r"reorgani[sz]\w+|renam\w+|typos?|lint\w*|speed(s|ing)? up|faster|optimi[sz]\w+|performance|perf|"
    r"no (functional|behaviou?r(al)?) changes?|behaviou?r[- ]preserving|internal(ly)?)\b", re.IGNORECASE)
MIN_PLAIN = 3  # shorter lower-case names (`f`, `ok`) never count, even marked as code
QUOTE = 160  # characters of the naming line quoted as evidence


@dataclass(frozen=True)
class Mention:
    source: str  # where: "the title", "commit 1a2b3c4", "CHANGES.rst", "the docstring of pkg.mod:f"
    quote: str  # the line that names it, cut to QUOTE characters

    def __str__(self) -> str:
        return f"{self.source}: \"{self.quote}\""


def names_of(target: str) -> list[str]:
    """The names a text may use for an operation or unit: `pkg.mod:Class.method` is named by
    `Class.method`, `method` and `Class`; dunder methods only through their class, module-level
    code not at all."""
    _, _, qualname = target.partition(":")
    qualname = re.sub(r"(?<=\w)<\w+>$", "", qualname)  # `main<argv>`: a form of the unit `main`
    parts = [part for part in qualname.split(".") if part and part != "<locals>"]
    if not parts or qualname.startswith("<module>"):
        return []
    names = [".".join(parts[-2:])] if len(parts) > 1 else []
    names += [part for part in reversed(parts) if not (part.startswith("__") and part.endswith("__"))]
    return list(dict.fromkeys(names))


def mention(text: PullRequestText, targets: Iterable[str]) -> Mention | None:
    """The first passage that names one of `targets` (or is the changed docstring of one)."""
    targets = list(targets)
    names = [name for target in targets for name in names_of(target)]
    for passage in text.passages:
        if passage.unit is not None:
            lines = passage.text.strip().splitlines()
            if passage.unit in targets and lines:  # a docstring whose added lines are blank says nothing
                return Mention(passage.source, _quote(lines[0]))
            continue
        found = _naming_line(passage, names)
        if found is not None:
            return Mention(passage.source, _quote(found))
    return None


def _naming_line(passage: Passage, names: list[str]) -> str | None:
    """The first line that names one of `names` as a change of behaviour (None if the passage's
    subject, or that line, claims to keep behaviour)."""
    lines = passage.text.strip().splitlines()
    if not lines or KEEPS_BEHAVIOUR.search(lines[0]):
        return None
    for line in lines:
        if any(_names(line, name) for name in names):
            return None if KEEPS_BEHAVIOUR.search(line) else line.strip()
    return None


def _names(line: str, name: str) -> bool:
    if _distinctive(name):
        return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", line) is not None
    if len(name) < MIN_PLAIN:
        return False
    word = re.escape(name)
    as_code = (rf"`[^`\n]*(?<![\w]){word}(?!\w)[^`\n]*`", rf"(?<![\w]){word}\(", rf"\w\.{word}(?!\w)",
               rf"(?<![\w.]){word}\.\w")
    return any(re.search(pattern, line) for pattern in as_code)


def _distinctive(name: str) -> bool:
    return any(c == "_" or c == "." or c.isdigit() or c.isupper() for c in name.strip("_"))


def _quote(line: str) -> str:
    line = " ".join(line.split())
    return line if len(line) <= QUOTE else line[:QUOTE - 1] + "…"
