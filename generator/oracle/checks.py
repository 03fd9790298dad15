"""How a leaf is asserted in a pytest test: the boolean expression true exactly when a value
matches the leaf, led by a type test when the other side's value could pass it with another type,
or the `pytest.raises` block an exception passes.

Floats are compared with `pytest.approx(value, rel=..., abs=...)` by the run's float policy, NaN
with `math.isnan`, infinities exactly. Texts the observer cleaned (addresses masked, long text
cut) are matched by a regular expression. A leaf with no assertable form raises `Unpinnable`.
"""

from __future__ import annotations

import re
from typing import Protocol

from ..worker.literals import source as literal_source
from ..worker.observe import MAX_ITEMS, MESSAGE_LIMIT
from ..worker.protocol import FOLDER_PLACEHOLDERS, Leaf, Step, Tag
from .leaves import FloatPolicy, is_raised, leaf_text

REGEX_SPECIAL = frozenset("\\.^$*+?{}[]|()")
EXACT_TAGS = frozenset({Tag.NONE, Tag.BOOL, Tag.OBJECT, Tag.ENUM, Tag.FUNCTION})  # checks that test the type
NUMERIC_TAGS = frozenset({Tag.INT, Tag.BIG_INT, Tag.FLOAT, Tag.COMPLEX, Tag.BOOL})
TEXT_TAGS = frozenset({Tag.STR, Tag.LONG_STR, Tag.BYTES, Tag.LONG_BYTES})
_BUILTIN_TYPES = {Tag.INT: "int", Tag.BIG_INT: "int", Tag.FLOAT: "float", Tag.COMPLEX: "complex",
                  Tag.STR: "str", Tag.LONG_STR: "str", Tag.BYTES: "bytes", Tag.LONG_BYTES: "bytes",
                  Tag.LIST: "list", Tag.TUPLE: "tuple", Tag.DICT: "dict"}


class Unpinnable(ValueError):
    """The mismatch has no test that passes on the pinned side (see the renderer's `can_pin`)."""


class Imports(Protocol):
    """What a check needs from the test it goes into: the float policy, the modules to import, and
    the name by which the test knows a project's class."""

    floats: FloatPolicy
    modules: set[str]

    def name_for(self, module: str, name: str) -> str: ...


def check(x: str, leaf: Leaf, other: Leaf | None, last: Step | None, imports: Imports) -> str:
    """The check of `x` against `leaf` (`last`: the key's last step), led by a type test when the
    other side's value has another type; Unpinnable when the leaf has none."""
    found = _check(x, leaf, other, last, imports)
    if found is None:
        raise Unpinnable(f"no assertable form for {leaf_text(leaf)}")
    guard = _type_guard(x, leaf, other)
    return f"{guard} and {found}" if guard else found


def raises(leaf: Leaf, other: Leaf | None, expression: str, imports: Imports) -> list[str]:
    """A `with pytest.raises(...)` block around `expression` that the pinned exception passes."""
    name, message = leaf[1], leaf[2]
    module = leaf[3] if len(leaf) > 3 else "builtins"
    if not all(part.isidentifier() for part in (*name.split("."), *module.split("."))):
        raise Unpinnable(f"exception class {module}.{name} cannot be imported")
    top = name.split(".")[0]
    exception = name if module == "builtins" else imports.name_for(module, top) + name[len(top):]
    pattern = _message_pattern(name, message)
    same_message = (other is not None and other[0] == Tag.RAISED
                    and bool(re.search(pattern, _sample(other[2]))))
    imports.modules.add("pytest")
    if same_message and other[1:2] == leaf[1:2] and other[3:4] == leaf[3:4]:  # type: ignore[index]
        raise Unpinnable(f"the same exception matches on both sides: {leaf_text(leaf)}")
    opening = f"with pytest.raises({exception}, match={_regex_literal(pattern)})"
    if same_message:  # another exception type with a matching message: it may be a subclass
        return [f"{opening} as excinfo:", f"    {expression}", f"assert type(excinfo.value) is {exception}"]
    return [f"{opening}:", f"    {expression}"]


def _message_pattern(name: str, message: str) -> str:
    """An anchored regex for a cleaned message: addresses were masked, long text was cut."""
    cut = len(message) == MESSAGE_LIMIT + 3 and message.endswith("...")
    body = _escape(message[:MESSAGE_LIMIT] if cut else message)
    open_ended = cut or name == "RecursionError"  # its suffix was dropped (see observe.exception_leaf)
    return f"^{body}" + ("" if open_ended else "$")


def _escape(text: str) -> str:
    """`re.escape` without escaping spaces (easier to read), masked addresses matching any address and
    the run's folders (the checkout, the temporary folder) any folder: the test runs in another."""
    escaped = "".join("\\" + c if c in REGEX_SPECIAL else c for c in text)
    escaped = escaped.replace("0x\\?", "0x[0-9a-fA-F]{4,}")
    for placeholder in FOLDER_PLACEHOLDERS:
        escaped = escaped.replace(placeholder, ".+")
    return escaped


def _masked(text: str) -> bool:
    """The observer masked something in `text`: an address, or one of the run's folders."""
    return "0x?" in text or _has_folder(text)


def _has_folder(text: str) -> bool:
    """`text` holds one of the run's folders, masked (a path under the checkout or the temporary folder)."""
    return any(placeholder in text for placeholder in FOLDER_PLACEHOLDERS)


def _sample(message: str) -> str:
    """A message that the cleaned `message` stands for (masked addresses and folders filled in)."""
    for placeholder in FOLDER_PLACEHOLDERS:
        message = message.replace(placeholder, "/folder")
    return message.replace("0x?", "0x0000")


def _pattern_check(x: str, text: str, imports: Imports) -> str:
    """`x` matches the masked `text` (equality when nothing in it was masked)."""
    if not _masked(text):
        return f"{x} == {text!r}"
    imports.modules.add("re")
    return f"re.fullmatch({_regex_literal(_escape(text))}, {x}) is not None"


def _regex_literal(pattern: str) -> str:
    trailing = len(pattern) - len(pattern.rstrip("\\"))
    if '"' not in pattern and pattern.isprintable() and trailing % 2 == 0:
        return f'r"{pattern}"'
    return repr(pattern)


def _type_guard(x: str, leaf: list, other: list | None) -> str | None:
    """`type(x) is int` when the other side's value could pass the check with another type.

    `1 == 1.0 == True`, and a length check holds for any sized value of that length.
    """
    if other is None or is_raised(other) or other[0] == Tag.NONE or other[0] == leaf[0]:
        return None
    tag, other_tag = leaf[0], other[0]
    if tag in EXACT_TAGS or _BUILTIN_TYPES.get(tag, tag) == _BUILTIN_TYPES.get(other_tag, other_tag):
        return None
    if tag in NUMERIC_TAGS and (other_tag not in NUMERIC_TAGS or not _numerically_equal(leaf, other)):
        return None
    if tag in TEXT_TAGS and other_tag in NUMERIC_TAGS | TEXT_TAGS:
        return None
    if tag in _BUILTIN_TYPES:
        return f"type({x}) is {_BUILTIN_TYPES[tag]}"
    if tag == Tag.GENERATOR:
        return f"type({x}).__name__ == 'generator'"
    if tag == Tag.SET:
        return f"isinstance({x}, (set, frozenset))"
    if "." in tag:  # a subclass of list, tuple or dict, by module and qualified name
        return f"type({x}).__module__ + '.' + type({x}).__qualname__ == {tag!r}"
    return None


def _numerically_equal(a: list, b: list) -> bool:
    def value(leaf: list) -> complex | None:
        if leaf[0] == Tag.BIG_INT:
            return None
        return complex(leaf[1]) if leaf[0] == Tag.COMPLEX else complex(float(leaf[1]))

    x, y = value(a), value(b)
    return x is None or y is None or x == y


def _check(x: str, leaf: list, other: list | None, last: Step | None, imports: Imports) -> str | None:
    """A boolean expression true exactly when `x` matches the leaf, or None if none exists."""
    tag = leaf[0]
    text_observer = last is not None and last.kind == "wrap" and last.text in ("str", "repr")
    if text_observer and tag in (Tag.STR, Tag.LONG_STR):
        return _text_check(x, leaf, imports)
    if tag == Tag.NONE:
        return f"{x} is None"
    if tag == Tag.EXCEPTION_VALUE:  # its class and message
        return f"type({x}).__qualname__ == {leaf[1]!r} and {_pattern_check(f'str({x})', leaf[2], imports)}"
    if tag == Tag.STANDARD:  # by its exact repr (`datetime.timedelta(days=1)`)
        return _pattern_check(f"repr({x})", leaf[2], imports)
    if tag == Tag.LONG_STANDARD:  # a long one (a large compiled regex): its length and digest
        imports.modules.add("hashlib")
        return (f"len(repr({x})) == {leaf[2]} and "
                f"hashlib.sha1(repr({x}).encode('utf-8', 'surrogatepass')).hexdigest()[:16] == {leaf[3]!r}")
    if tag == Tag.BOOL:
        return f"{x} is {leaf[1]}"
    if tag == Tag.STR and _has_folder(leaf[1]):
        return _pattern_check(x, leaf[1], imports)  # a path under one of the run's folders
    if tag in (Tag.INT, Tag.STR):
        return f"{x} == {leaf[1]!r}"
    if tag == Tag.BYTES:
        return f"{x} == {bytes.fromhex(leaf[1])!r}"
    if tag == Tag.FLOAT:
        return _float_check(x, float(leaf[1]), imports)
    if tag == Tag.COMPLEX:
        if complex(leaf[1]) != complex(leaf[1]):
            return None  # NaN parts
        return f"{x} == complex({leaf[1]!r})" if "inf" in leaf[1] else f"{x} == {leaf[1]}"
    if tag == Tag.BIG_INT:  # integer beyond 2**62: bit length and (deterministic) int hash
        return f"{x}.bit_length() == {leaf[1]} and hash({x}) == {leaf[2]}"
    if tag in (Tag.LONG_STR, Tag.LONG_BYTES):  # long text: length and digest
        imports.modules.add("hashlib")
        data = f"{x}.encode('utf-8', 'surrogatepass')" if tag == Tag.LONG_STR else x
        return f"len({x}) == {leaf[1]} and hashlib.sha1({data}).hexdigest()[:16] == {leaf[2]!r}"
    if tag == Tag.OBJECT:
        short = leaf[1].rsplit(".", 1)[-1]
        if other is not None and other[0] == Tag.OBJECT and other[1].rsplit(".", 1)[-1] == short:
            return f"type({x}).__module__ + '.' + type({x}).__qualname__ == {leaf[1]!r}"
        return f"type({x}).__name__ == {short!r}"
    if tag == Tag.ENUM:
        enum_type, _, member = leaf[1].rpartition(".")
        if other is not None and other[0] == Tag.ENUM and other[1].rpartition(".")[0] == enum_type:
            return f"{x}.name == {member!r}"  # another member of the same enum
        return f"type({x}).__qualname__ + '.' + {x}.name == {leaf[1]!r}"
    if tag == Tag.FUNCTION:
        return f"{x}.__module__ + '.' + {x}.__qualname__ == {leaf[1]!r}"
    if tag == Tag.GENERATOR:
        return _count_check(f"list({x})", leaf[1])
    if tag == Tag.SET:
        return _set_check(x, leaf)
    if len(leaf) >= 3 and isinstance(leaf[2], list):  # dict or mapping: size and keys in order
        if all(isinstance(k, list) for k in leaf[2]) and leaf[1] <= len(leaf[2]):
            return f"list({x}) == [{', '.join(literal_source(k) for k in leaf[2])}]"
        return f"len({x}) == {leaf[1]}"
    if len(leaf) == 2 and isinstance(leaf[1], int) and not isinstance(leaf[1], bool):  # list, tuple
        if last is not None and last.kind == "wrap" and last.text == "list":
            return _count_check(x, leaf[1])  # the observer took at most MAX_ITEMS items
        return f"len({x}) == {leaf[1]}"
    return None


def _count_check(items: str, count: int) -> str:
    """`items` (a list built from an iterator the observer cut at MAX_ITEMS) has `count` items."""
    return f"len({items}) == {count}" if count < MAX_ITEMS else f"len({items}) >= {count}"


def _text_check(x: str, leaf: list, imports: Imports) -> str | None:
    """str()/repr() observers record cleaned text: addresses masked, long text digested."""
    if leaf[0] == Tag.LONG_STR:
        return None  # cut short, then digested: nothing left to compare with
    return _pattern_check(x, leaf[1], imports)


def _float_check(x: str, value: float, imports: Imports) -> str:
    if value != value:
        imports.modules.add("math")
        return f"math.isnan({x})"
    if value in (float("inf"), float("-inf")):
        return f"{x} == float({str(value)!r})"
    imports.modules.add("pytest")
    return f"{x} == pytest.approx({value!r}, rel={imports.floats.rel!r}, abs={imports.floats.abs!r})"


def _set_check(x: str, leaf: list) -> str:
    items = leaf[2] if len(leaf) > 2 else None
    if isinstance(items, list) and all(isinstance(i, list) for i in items):
        return f"{x} == {literal_source(['set', items])}" if items else f"{x} == set()"
    return f"len({x}) == {leaf[1]}"
