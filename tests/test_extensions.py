"""Compiled extensions: the report says whether the compiled code or a pure-Python fallback was tested."""

from __future__ import annotations

from conftest import RepoBuilder, make_pr, run_analyze

SPEEDUPS = '''\
try:
    from pkg._speedups import double
except ImportError:
    def double(x: int) -> int:
        return x * 2
'''
SETUP = ("from setuptools import Extension, setup\n\n"
         "setup(ext_modules=[Extension('pkg._speedups', ['src/speedups.c'])])\n")
BUILT = "pkg/_speedups.cpython-311-x86_64-linux-gnu.so"


def _notes(builder: RepoBuilder, files: dict[str, str]) -> list[str]:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/fast.py": SPEEDUPS, **files},
            {"pkg/fast.py": SPEEDUPS.replace("x * 2", "x + x")})
    return [note for note in run_analyze(builder, max_sequences=50).notes if "compiled extensions" in note]


def test_a_fallback_tested_instead_of_the_extension_is_said(builder: RepoBuilder) -> None:
    [note] = _notes(builder, {"setup.py": SETUP, "src/speedups.c": "/* the compiled double */\n"})
    assert note.startswith("The project builds compiled extensions (C: src/speedups.c), but the checkouts "
                           "hold no built module")


def test_built_modules_in_the_checkout_are_said_to_be_tested(builder: RepoBuilder) -> None:
    [note] = _notes(builder, {"setup.py": SETUP, "src/speedups.c": "/* the compiled double */\n",
                              BUILT: "not really a module\n"})
    assert f"the checkout holds built modules ({BUILT})" in note


def test_sources_no_build_declares_are_not_extensions(builder: RepoBuilder) -> None:
    plain = "from setuptools import setup\n\nsetup()\n"
    sources = {"pkg/vendored.c": "int x;\n", "docs/example.c": "int main;\n"}
    assert _notes(builder, {"setup.py": plain, **sources}) == []
