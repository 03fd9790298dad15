"""The documentation's links hold: every relative Markdown link in README.md, docs/*.md and the
Markdown files under benchmarks/ points to a file of the repository, and a `#fragment` names a
heading of its target by GitHub's anchor rules. Web links are not fetched. Also: README.md stays
short and keeps the quick start's two commands as they are.

Headings are ATX headings (`# Title`); links are inline (`[text](target)`, images included) or
reference definitions (`[name]: target`); fenced code blocks and inline code are not read.
Fast, no network, and nothing of difforacle is imported.
"""

from __future__ import annotations

import difflib
import re
import subprocess
from collections.abc import Iterator
from functools import cache
from urllib.parse import unquote

import pytest
from support.paths import ROOT

README = ROOT / "README.md"
README_LIMIT = 15_000  # bytes
QUICK_START = (
    "python3 -m pip install -e . && difforacle demo",
    ".ci/services && python3 -m pip install -e '.[dev,app,solver]' && python -m pytest -m \"not slow\"",
)
DOC_PAGES = ("usage.md", "action.md", "app.md", "how-it-works.md", "development.md")

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
# [text](target) or ![alt](target), with an optional title; <target> may hold spaces
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
                         r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _repository_files() -> set[str]:
    """The repository's files, relative, as git sees them (tracked or new, not ignored); every file
    under ROOT when this is no git checkout."""
    try:
        listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                                cwd=ROOT, capture_output=True, check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return {p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*") if p.is_file()}
    return {name for name in listed.decode("utf-8").split("\0") if name and (ROOT / name).is_file()}


FILES = _repository_files()
FOLDERS = {"/".join(name.split("/")[:i]) for name in FILES for i in range(1, name.count("/") + 1)}


def _checked_files() -> list[str]:
    wanted = {"README.md"}
    wanted |= {name for name in FILES if re.fullmatch(r"docs/[^/]+\.md", name)}
    wanted |= {name for name in FILES if name.startswith("benchmarks/") and name.endswith(".md")}
    return sorted(wanted)


def prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) outside fenced code blocks."""
    fence = ""
    for number, line in enumerate(text.splitlines(), 1):
        opening = FENCE.match(line)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence) \
                    and not line.strip()[len(opening.group(1)):].strip():
                fence = ""
            continue
        if opening:
            fence = opening.group(1)
            continue
        yield number, line


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: inline code's backticks and link targets dropped,
    lowercase, every character but letters, digits, spaces, `-` and `_` removed, spaces to `-`."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text stays, its target goes
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML tags
    text = text.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> list[str]:
    """Every heading's anchor, in order; a repeated one gets `-1`, `-2`, ... as on GitHub."""
    seen: dict[str, int] = {}
    found = []
    for _, line in prose_lines(text):
        match = HEADING.match(line)
        if not match:
            continue
        anchor = github_anchor(match.group(2))
        if anchor in seen:
            seen[anchor] += 1
            found.append(f"{anchor}-{seen[anchor]}")
        else:
            seen[anchor] = 0
            found.append(anchor)
    return found


@cache
def anchors_of(name: str) -> frozenset[str]:
    return frozenset(anchors((ROOT / name).read_text(encoding="utf-8")))


def links(text: str) -> Iterator[tuple[int, str]]:
    """(line number, target) of every inline link and reference definition outside code."""
    for number, line in prose_lines(text):
        reference = REFERENCE.match(line)
        if reference:
            yield number, reference.group(1)
            continue
        for match in INLINE_LINK.finditer(INLINE_CODE.sub(lambda code: " " * len(code.group()), line)):
            yield number, match.group(1)


def broken_link(source: str, target: str) -> str | None:
    """Why `target`, linked from the repository file `source`, is broken; None when it holds."""
    target = target.strip("<>").strip()
    if not target:
        return "empty target"
    if SCHEME.match(target) or target.startswith("//"):
        return None  # a web address (or mailto:): not fetched
    path, _, fragment = target.partition("#")
    path = unquote(path.split("?", 1)[0])
    if path.startswith("/"):
        return "absolute path: link relative to the file instead"
    if path:
        resolved = (ROOT / source).parent / path
        try:
            name = resolved.resolve().relative_to(ROOT).as_posix()
        except ValueError:
            return f"{path} lies outside the repository"
        if name not in FILES and name not in FOLDERS:
            return f"{path} ({name}) is no file of the repository"
    else:
        name = source
    if fragment:
        if name not in FILES or not name.endswith(".md"):
            return f"#{fragment}: only a Markdown file's headings can be linked to"
        if unquote(fragment) not in anchors_of(name):
            close = difflib.get_close_matches(unquote(fragment), anchors_of(name), n=3, cutoff=0.5)
            hint = f"did you mean {', '.join('#' + a for a in close)}?" if close else \
                f"its anchors: {', '.join(sorted(anchors_of(name))[:20]) or 'none'}"
            return f"#{fragment} is no heading of {name} ({hint})"
    return None


@pytest.mark.parametrize("name", _checked_files())
def test_relative_links_point_to_files_and_headings(name: str) -> None:
    text = (ROOT / name).read_text(encoding="utf-8")
    broken = [f"{name}:{number}: ({target}): {why}" for number, target in links(text)
              if (why := broken_link(name, target))]
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_the_checked_files_include_the_readme_and_the_docs() -> None:
    checked = _checked_files()
    assert "README.md" in checked
    missing = [page for page in DOC_PAGES if f"docs/{page}" not in checked]
    assert not missing, f"docs pages missing: {missing}"


def test_the_readme_links_every_docs_page() -> None:
    text = README.read_text(encoding="utf-8")
    targets = {target.strip("<>").partition("#")[0] for _, target in links(text)}
    pages = sorted(name for name in FILES if re.fullmatch(r"docs/[^/]+\.md", name))
    unlinked = [page for page in pages if page not in targets]
    assert not unlinked, f"README.md links none of {unlinked}"


def test_the_readme_is_short() -> None:
    size = len(README.read_bytes())
    assert size <= README_LIMIT, (f"README.md is {size} bytes, over {README_LIMIT}: move detail into docs/ "
                                  "or benchmarks/RESULTS.md")


@pytest.mark.parametrize("command", QUICK_START)
def test_the_readme_holds_the_quick_start_commands(command: str) -> None:
    assert command in README.read_text(encoding="utf-8"), f"README.md lost its quick-start command: {command}"


@pytest.mark.parametrize(("heading", "anchor"), [
    ("Quick start", "quick-start"),
    ("Settings: `[tool.difforacle]` in pyproject.toml", "settings-tooldifforacle-in-pyprojecttoml"),
    ("The `--disable` names", "the---disable-names"),
    ("Exit status (0, 1, 2)", "exit-status-0-1-2"),
    ("2026-11-26 · 3d0faa1: every mutant", "2026-11-26--3d0faa1-every-mutant"),
    ("[GitHub App](docs/app.md) in_short", "github-app-in_short"),
    ("  Trailing spaces  ", "trailing-spaces"),
])
def test_github_anchor(heading: str, anchor: str) -> None:
    assert github_anchor(heading) == anchor


def test_repeated_headings_are_numbered_and_code_is_skipped() -> None:
    text = "# Setup\n\n## Setup\n\n```\n# Setup\n```\n\n### Setup ###\n"
    assert anchors(text) == ["setup", "setup-1", "setup-2"]


def test_links_outside_code_are_found() -> None:
    text = ("See [usage](docs/usage.md#exit-status) and ![logo](img/a%20b.png \"title\").\n"
            "Not `[code](x.md)`.\n\n```\n[fenced](y.md)\n```\n[ref]: <docs/app.md>\n"
            "A [link](https://example.com/a_(b)) and [wiki](page_(x).md).\n")
    assert [target for _, target in links(text)] == [
        "docs/usage.md#exit-status", "img/a%20b.png", "<docs/app.md>", "https://example.com/a_(b)",
        "page_(x).md"]
