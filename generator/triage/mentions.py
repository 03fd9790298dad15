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
counts wherever it stands as a whole word, in any capitals that keep it distinctive (`TzInfoParser`
for `TzinfoParser`). A plain lower-case word (`parse`, `items`) is also English, so it counts only
where the text marks it as code: in backticks, called (`parse(`), joined to another name by a dot
(`durations.parse`, `Meter.add`), or as the component a line's prefix names (`slugify: keep dots`).
In text that documents the code (a changelog line, a changed docstring) it also counts as a plain
word: such a mention is `prose`, and its own rule (`words-name-it-in-prose`) weighs it; so is any
naming in the changed docstring of another unit. A name of three words or more is also named by
those words in prose (`BLOCK_LEVEL_ELEMENTS` by "a block-level element"); two words (`RateMeter`:
"a rate meter") are too often plain English. A module is named by its file (`idnadata.py`) or its dotted path
(`idna.idnadata`, not `idna.idnadata.encode`, which names a member).

Whatever verb goes with the name counts: "Update slugify.slugify" names `slugify` as much as "Fix
slugify.slugify" does (a list of vague verbs that made such lines say nothing was fitted to titles
the benchmark once wrote, and on real pull requests it never decided a difference: it is gone).
A name the pull request removes (an API change "missing") is explained by any passage that names
it, a rename or a move included: removing the name is what such a passage says.

A module's table is one name for many entries, and a regression in one entry hides well behind an
intended edit of another. So naming the table explains a difference in it only when the words also
single out every entry that differs (`names_entry`): a string or number in it, as a whole word
("add RETURNING to the keywords"), or, for an entry edited in place, text quoted as code that its
string has on one side only ("a `(?!=)` lookahead" for a pattern that gained it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ..oracle.entries import telling
from ..report.model import TableEntry
from .pull_request import Passage, PullRequestText

# the words of a change that claims to keep behaviour (commit conventions: refactor, perf, style)
KEEPS_BEHAVIOUR = re.compile(
    r"\b(refactor\w*|tid(y|ies|ied|ying)|clean(s|ed|ing)?[ -]?up|simplif\w+|streamlin\w+|restructur\w+|"
    r"reorgani[sz]\w+|renam\w+|typos?|lint\w*|speed(s|ing)? up|faster|optimi[sz]\w+|performance|perf|"
    r"no (functional|behaviou?r(al)?) changes?|behaviou?r[- ]preserving|internal(ly)?)\b", re.IGNORECASE)
# what a line says its change does to the outcome: inputs it now takes that raised before ("support
# negative durations", "no longer crash on ..."), or inputs it now refuses ("raise ValueError for ...")
ACCEPTS = re.compile(
    r"\b(support(s|ed|ing)?|accept(s|ed|ing)?|allow(s|ed|ing)?|handl(e|es|ed|ing)|permit(s|ted|ting)?|"
    r"tolerat\w+|no longer (raise|fail|crash|error)\w*|(fix(es|ed)?|avoid(s|ed)?|prevent(s|ed)?) (an? |the )?"
    r"(crash|error|exception|failure|traceback)\w*)\b", re.IGNORECASE)
REFUSES = re.compile(r"\b(rais(e|es|ed|ing)|reject(s|ed|ing)?|refus(e|es|ed|ing)|disallow(s|ed|ing)?|"
                     r"forbid\w*|den(y|ies|ied)|validat\w+)\b", re.IGNORECASE)
PHRASE_WORDS = 3  # a name of this many words or more is also named by those words in prose
MIN_PLAIN = 3  # shorter lower-case names (`f`, `ok`) never count, even marked as code
QUOTE = 160  # characters of the naming line quoted as evidence


@dataclass(frozen=True)
class Mention:
    source: str  # where: "the title", "commit 1a2b3c4", "CHANGES.rst", "the docstring of pkg.mod:f"
    quote: str  # the line that names it, cut to QUOTE characters
    line: str = field(default="", compare=False)  # the whole line ("" for a changed docstring)
    prose: bool = field(default=False, compare=False)  # named by a plain word in documenting text only

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


def module_names_of(target: str) -> list[str]:
    """The names of the module an operation or unit lives in: its file (`idnadata.py`; never
    `__init__.py`, which every package has) and its dotted path, if it has a dot (`idna.idnadata`)."""
    parts = target.partition(":")[0].split(".")
    names = [f"{parts[-1]}.py"] if parts[-1] != "__init__" else []
    return names + ([".".join(parts)] if len(parts) > 1 else [])


def mention(text: PullRequestText, targets: Iterable[str], removed: bool = False) -> Mention | None:
    """The first passage that names one of `targets` (or is the changed docstring of one).
    `removed`: the difference is a name gone on head, which a rename or a move also names."""
    return next(mentions(text, targets, removed), None)


def mentions(text: PullRequestText, targets: Iterable[str], removed: bool = False) -> Iterator[Mention]:
    """Each passage that names one of `targets`, in the order a reviewer reads them (see `mention`)."""
    return (found for found, refused in readings(text, targets, removed) if not refused)


def refusals(text: PullRequestText, targets: Iterable[str],
             removed: bool = False) -> Iterator[tuple[Mention, str]]:
    """Each passage that names one of `targets` but does not count, with why: it says its change
    keeps behaviour."""
    return ((found, refused) for found, refused in readings(text, targets, removed) if refused)


def readings(text: PullRequestText, targets: Iterable[str],
             removed: bool = False) -> Iterator[tuple[Mention, str]]:
    """Each passage that names one of `targets`, with why it does not count ("" when it does)."""
    targets = list(targets)
    names = list(dict.fromkeys(name for target in targets for name in names_of(target)))
    modules = list(dict.fromkeys(name for target in targets for name in module_names_of(target)))
    for passage in text.passages:
        if passage.unit in targets:
            lines = passage.text.strip().splitlines()
            if lines:  # a docstring whose added lines are blank says nothing
                yield Mention(passage.source, _quote(lines[0])), ""
            continue
        found = None if passage.unit is not None else _naming_line(passage, names, modules, removed)
        prose = found is None and passage.documents  # another unit's docstring: only ever prose
        if prose:
            found = _naming_line(passage, names, modules, removed, prose=True)
        if found is not None:
            line, refused = found
            yield Mention(passage.source, _quote(line), line, prose), refused


def outcome_named(line: str) -> str | None:
    """What the line says its change does to the outcome: "accepts" (inputs that raised now give a
    result), "refuses" (inputs that gave a result now raise), or None when it says neither or both."""
    accepts = ACCEPTS.search(line) is not None
    refuses = REFUSES.search(ACCEPTS.sub(" ", line)) is not None  # "no longer raise" is acceptance
    return "accepts" if accepts and not refuses else "refuses" if refuses and not accepts else None


def names_type(line: str, name: str) -> bool:
    """Whether `line` names the type `name` (`Decimal`; a plain `date` only marked as code)."""
    return bool(_names(line, name))


def names_entry(text: PullRequestText, entry: TableEntry) -> Mention | None:
    """The first passage that singles out a table's entry (see the module), or None."""
    for passage in text.passages:
        for line in passage.text.splitlines():
            quoted = {span.strip() for span in re.findall(r"`+([^`\n]+?)`+", line) if telling(span.strip())}
            if any((span in old) != (span in new) for span in quoted for old, new in entry.edits) or any(
                    re.search(rf"(?<!\w){re.escape(word)}(?!\w)", line) for word in entry.words):
                return Mention(passage.source, _quote(line))
    return None


KEEPS = "says its change keeps behaviour"  # why a naming line does not count


def _naming_line(passage: Passage, names: list[str], modules: list[str], removed: bool,
                 prose: bool = False) -> tuple[str, str] | None:
    """The first line that names one of `names` or `modules`, with "" when it counts, or with why not
    (its passage's subject, or the line, claims to keep behaviour, unless the name is `removed`);
    None when no line names one."""
    lines = passage.text.strip().splitlines()
    keeps = (lambda line: False) if removed else (lambda line: KEEPS_BEHAVIOUR.search(line) is not None)
    for line in lines:
        spans = [span for name in names for span in (_names_in_prose if prose else _names)(line, name)]
        spans += [span for module in modules for span in _names_module(line, module)]
        if spans:
            return line.strip(), KEEPS if keeps(lines[0]) or keeps(line) else ""
    return None


def _names(line: str, name: str) -> list[tuple[int, int]]:
    """Where `line` names `name` (empty if it does not)."""
    if _distinctive(name):
        found = [m.span() for m in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", line, re.IGNORECASE)
                 if _distinctive(m.group())]
        return found or _phrase(line, name)
    if len(name) < MIN_PLAIN:
        return []
    word = re.escape(name)
    as_code = (rf"`[^`\n]*(?<![\w]){word}(?!\w)[^`\n]*`", rf"(?<![\w]){word}\(", rf"\w\.{word}(?!\w)",
               rf"(?<![\w.]){word}\.\w", rf"^[\s*+-]*{word}(?=:\s)")  # the last: a component prefix
    return [m.span() for pattern in as_code for m in re.finditer(pattern, line)]


def _names_in_prose(line: str, name: str) -> list[tuple[int, int]]:
    """Where `line` names `name` as a plain word (in text that documents the code)."""
    if _distinctive(name) or len(name) < MIN_PLAIN:
        return _names(line, name)
    return [m.span() for m in re.finditer(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", line)]


def _phrase(line: str, name: str) -> list[tuple[int, int]]:
    """Where prose says a name of PHRASE_WORDS words or more word by word: `BLOCK_LEVEL_ELEMENTS`
    as "block-level element", `parse_iso_week_date` as "parse ISO week dates"."""
    words = [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", name.split(".")[-1])]
    if len(words) < PHRASE_WORDS:
        return []
    stems = [re.escape(w[:-1] if w.endswith("s") and len(w) > 3 else w) for w in words]
    pattern = r"(?<!\w)" + r"[\s_-]+".join(stem + r"s?" for stem in stems) + r"(?!\w)"
    return [m.span() for m in re.finditer(pattern, line, re.IGNORECASE)]


def _names_module(line: str, module: str) -> list[tuple[int, int]]:
    """Where `line` names a module itself (`idnadata.py`, `idna.idnadata`), not one of its members."""
    pattern = rf"(?<![\w.]){re.escape(module)}(?![\w]|\.\w)"
    return [m.span() for m in re.finditer(pattern, line)]


def _distinctive(name: str) -> bool:
    return any(c == "_" or c == "." or c.isdigit() or c.isupper() for c in name.strip("_"))


def _quote(line: str) -> str:
    line = " ".join(line.split())
    return line if len(line) <= QUOTE else line[:QUOTE - 1] + "…"
