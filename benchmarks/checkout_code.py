"""Benchmark scripts and probes run the code of the checkout they live in, not an installed one.

A benchmark is often run from a worktree pinned to one commit, beside an editable install of
another. The repository's folders `generator/` and `bot/` install as `difforacle.generator` and
`difforacle.bot`; `use_this_checkout()` binds those names to this checkout's folders, for
everything imported after it (nothing is imported before it is needed).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PARTS = {"difforacle.generator": ROOT / "generator", "difforacle.bot": ROOT / "bot"}


class _ThisCheckout:
    """A meta path finder for `difforacle` and its two parts, ahead of any installed copy."""

    @staticmethod
    def find_spec(fullname: str, path: object = None,
                  target: object = None) -> importlib.machinery.ModuleSpec | None:
        if fullname == "difforacle":
            spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
            spec.submodule_search_locations = []  # its parts are found by name, below
            return spec
        folder = PARTS.get(fullname)
        if folder is None:
            return None
        return importlib.util.spec_from_file_location(fullname, folder / "__init__.py",
                                                      submodule_search_locations=[str(folder)])


def use_this_checkout() -> None:
    """Make `difforacle.generator` and `difforacle.bot` this checkout's code (call before importing them)."""
    if _ThisCheckout not in sys.meta_path:
        sys.meta_path.insert(0, _ThisCheckout)
