"""Where on a pull request's diff a review comment may sit.

GitHub accepts a review comment only on a line that appears in the file's diff hunks on
the chosen side (RIGHT: head line numbers, LEFT: base line numbers), and one bad anchor
makes it reject the whole review. The hunks come from the `patch` of each file that the
pull request's files endpoint returns, parsed with unidiff.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from .github_client import PullFile


@dataclass
class FileHunks:
    """The lines of one file a comment can anchor on, by side, and the head text of each."""

    right: dict[int, str] = field(default_factory=dict)  # head line -> its text
    left: set[int] = field(default_factory=set)
    last_right: list[int] = field(default_factory=list)  # the last head line of each hunk


class DiffAnchors:
    def __init__(self, files: list[PullFile]) -> None:
        self.files: dict[str, FileHunks] = {}
        for pull_file in files:
            if pull_file.patch:
                self.files[pull_file.filename] = _hunks(pull_file.filename, pull_file.patch)

    def valid(self, path: str | None, line: int | None, side: str) -> bool:
        """Whether (path, line) is inside a hunk on `side` ("RIGHT" or "LEFT")."""
        hunks = self.files.get(path or "")
        if hunks is None or line is None:
            return False
        return line in (hunks.right if side == "RIGHT" else hunks.left)

    def test_file_for(self, source_path: str) -> tuple[str, int, str] | None:
        """A test file this pull request changes that matches `source_path` (`pkg/parse.py` ->
        `tests/test_parse.py`): its path, the last head line of its last hunk and that line's text."""
        stem = source_path.rsplit("/", 1)[-1].removesuffix(".py")
        names = {f"test_{stem}.py", f"{stem}_test.py"}
        for path in sorted(self.files):
            hunks = self.files[path]
            if path.rsplit("/", 1)[-1] in names and hunks.last_right:
                line = hunks.last_right[-1]
                return path, line, hunks.right[line]
        return None


def _hunks(path: str, patch: str) -> FileHunks:
    hunks = FileHunks()
    text = f"--- a/{path}\n+++ b/{path}\n{patch}"
    if not text.endswith("\n"):
        text += "\n"
    try:
        parsed = PatchSet(text)
    except UnidiffParseError:
        return hunks
    for patched_file in parsed:
        for hunk in patched_file:
            last = None
            for line in hunk:
                if line.target_line_no is not None:
                    hunks.right[line.target_line_no] = line.value.rstrip("\n")
                    last = line.target_line_no
                if line.source_line_no is not None:
                    hunks.left.add(line.source_line_no)
            if last is not None:
                hunks.last_right.append(last)
    return hunks
