"""What the catalog lists so that changed code is reached: a changed module's exception classes
(their messages are behaviour), and the protocol operations of the private classes whose
instances the module exposes as public values."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.analysis import run_analyze
from support.catalog_samples import real_catalog
from support.repos import RepoBuilder, make_pr

ERRORS = '''\
class FrozenError(AttributeError):
    """Raised on assignment to a frozen instance."""

    msg = "can't set attribute"

    def __init__(self, name=""):
        self.name = name
        super().__init__()
'''
# head passes the message on: str(error) is no longer empty
WITH_MESSAGE = ERRORS.replace("        super().__init__()\n", "        super().__init__(self.msg)\n")

TOKENS = '''\
class _TokenType(tuple):
    parent = None

    def __contains__(self, item):
        return item is not None and (self is item or item[:len(self)] == self)

    def __getattr__(self, name):
        new = _TokenType(self + (name,))
        setattr(self, name, new)
        new.parent = self
        return new


Token = _TokenType()
Keyword = Token.Keyword
'''
# head makes up no token types for dunder names: deepcopy, which looks up __deepcopy__, works again
NO_DUNDERS = TOKENS.replace("    def __getattr__(self, name):\n", "    def __getattr__(self, name):\n"
                            "        if name.startswith('__'):\n            raise AttributeError(name)\n")


def test_the_private_class_of_public_values_gets_protocol_operations(tmp_path: Path) -> None:
    catalog = real_catalog(tmp_path, "dor_tokens", TOKENS)
    ids = {op.id for op in catalog.operations}
    assert {"dor_tokens:Token", "dor_tokens:Keyword", "copy:deepcopy", "operator:contains"} <= ids
    assert "dor_tokens._TokenType" in catalog.classes
    assert not any(op_id.startswith("dor_tokens:_TokenType") for op_id in ids)  # no private constructor


@pytest.mark.slow
def test_a_dunder_lookup_through_a_value_of_a_private_class(builder: RepoBuilder) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/tokens.py": TOKENS}, {"pkg/tokens.py": NO_DUNDERS})
    report = run_analyze(builder, max_sequences=200)
    # the code that ran: copying found no `__deepcopy__`, and `__getattr__` answered
    assert {d.target for d in report.differences} == {"pkg.tokens:_TokenType.__getattr__"}


def test_exception_classes_of_a_module_are_listed_with_a_constructor(tmp_path: Path) -> None:
    catalog = real_catalog(tmp_path, "dor_errors", ERRORS + "\n\nclass Plain(ValueError):\n    pass\n")
    kinds = {op.qualname: op.kind for op in catalog.operations if op.module == "dor_errors"}
    assert kinds == {"FrozenError": "constructor", "Plain": "constructor"}


def test_an_exception_whose_message_changed(builder: RepoBuilder) -> None:
    files = {"pkg/__init__.py": "", "pkg/exceptions.py": ERRORS}
    make_pr(builder, files, {"pkg/exceptions.py": WITH_MESSAGE})
    report = run_analyze(builder, max_sequences=200)
    found = [d for d in report.differences if d.target == "pkg.exceptions:FrozenError"]
    assert found, [d.target for d in report.differences]
    assert all(d.reproduced for d in found)
    assert '.__qualname__ == "FrozenError" and str(' in found[0].test  # a value: no pytest.raises
