"""Where the repository's parts are, for tests that read or run files of the checkout by path."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the checkout: generator/, bot/, tests/, benchmarks/
TESTS = ROOT / "tests"
SUPPORT = TESTS / "support"
FIXTURES = TESTS / "fixtures"
BENCHMARKS = ROOT / "benchmarks"
