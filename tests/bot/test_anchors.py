"""Tests for `difforacle.bot.anchors`: where in a pull request's diff a review comment may anchor."""

from __future__ import annotations

from difforacle.bot.anchors import DiffAnchors
from difforacle.bot.github_client import PullFile

PATCH = """\
@@ -10,3 +10,4 @@ def parse(text):
     value = text.strip()
-    return int(value)
+    number = int(value)
+    return number * 60
     # end
"""


def test_anchors_are_the_hunk_lines_of_each_side() -> None:
    anchors = DiffAnchors([PullFile("pkg/parse.py", "modified", PATCH), PullFile("logo.png", "added", None)])
    assert all(anchors.valid("pkg/parse.py", line, "RIGHT") for line in (10, 11, 12, 13))
    assert not anchors.valid("pkg/parse.py", 14, "RIGHT") and not anchors.valid("pkg/parse.py", 9, "RIGHT")
    assert anchors.valid("pkg/parse.py", 11, "LEFT") and not anchors.valid("pkg/parse.py", 13, "LEFT")
    assert not anchors.valid("logo.png", 1, "RIGHT") and not anchors.valid("other.py", 1, "RIGHT")
    assert not anchors.valid("pkg/parse.py", None, "RIGHT")


def test_a_changed_test_file_matching_the_source_is_found() -> None:
    test_patch = "@@ -0,0 +1,2 @@\n+def test_parse():\n+    assert True\n"
    anchors = DiffAnchors([PullFile("pkg/parse.py", "modified", PATCH),
                           PullFile("tests/test_parse.py", "added", test_patch)])
    assert anchors.test_file_for("pkg/parse.py") == ("tests/test_parse.py", 2, "    assert True")
    assert anchors.test_file_for("pkg/other.py") is None
