"""A module of source text, imported for the duration of a test (the worker's unit tests list and
call real modules)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def imported(folder: Path, name: str, source: str) -> Iterator[object]:
    """`source` written as `folder/name.py` and imported; gone from `sys.path` and `sys.modules` after."""
    (folder / f"{name}.py").write_text(source, encoding="utf-8")
    sys.path.insert(0, str(folder))
    try:
        yield __import__(name)
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop(name, None)
