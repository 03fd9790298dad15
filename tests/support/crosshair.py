"""CrossHair for the solver's tests: whether it is installed here (`needs_crosshair` skips a test
without it), and `CODES`, a module with branches only a solved input takes."""

from __future__ import annotations

import importlib.util
import textwrap

import pytest

HAS_CROSSHAIR = importlib.util.find_spec("crosshair") is not None
needs_crosshair = pytest.mark.skipif(not HAS_CROSSHAIR, reason="crosshair-tool is not installed "
                                     "(pip install 'difforacle[solver]')")

CODES = textwrap.dedent('''\
    def classify(code: int) -> str:
        """The label of a status code."""
        if code * 7 % 1000 == 431:
            return "reserved"
        if code < 0:
            return "negative"
        return "plain"


    def greet(name: str) -> str:
        if name[::-1] == "nimda":
            return "welcome back"
        return "hello " + name
''')
