"""Field-coverage triples (`difforacle.generator.worker.fields`): canonical, abstract, bounded,
deterministic."""

from __future__ import annotations

import enum
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.engine_parts import WORKER_OPTIONS
from support.paths import ROOT

from difforacle.generator.changes.model import ChangeSet, Checkout, FileChange
from difforacle.generator.runtime.workers import Worker
from difforacle.generator.worker.fields import field_triples, graph_triples

HERE = __name__  # how this module's classes are named in triples
FIELDS_PY = ROOT / "generator" / "worker" / "fields.py"


class Node:
    def __init__(self, value: Any, left: Node | None = None, right: Node | None = None) -> None:
        self.value, self.left, self.right = value, left, right


class Tree:
    def __init__(self, root: Node | None = None) -> None:
        self.root = root


class Slotted:
    __slots__ = ("__secret", "item", "unset")

    def __init__(self, item: Any) -> None:
        self.item = item
        self.__secret = 1


class Color(enum.Enum):
    RED = 1


class Flags(enum.IntFlag):
    A = 1
    B = 2


class Trap:
    """Every attribute access through the normal path would raise."""

    def __init__(self) -> None:
        self.data = [1]

    def __getattribute__(self, name: str) -> Any:
        raise RuntimeError("no")

    @property
    def boom(self) -> int:
        raise RuntimeError("boom")


def _destinations(triples: list[str]) -> set[str]:
    return {t.rsplit("|", 1)[1] for t in triples}


def test_numbering_does_not_depend_on_creation_order() -> None:
    # Same shape built bottom-up and top-down: different ids, same canonical names.
    leaf_a, leaf_b = Node(2), Node(3)
    first = Tree(Node(3, leaf_a, leaf_b))
    second = Tree(Node(3))
    second.root.right = Node(7)  # type: ignore[union-attr]
    second.root.left = Node(4)  # type: ignore[union-attr]
    assert field_triples(first) == field_triples(second)
    assert f"{HERE}.Node.left|0|{HERE}.Node#1" in field_triples(first)
    assert f"{HERE}.Node.right|0|{HERE}.Node#2" in field_triples(first)


def test_numbering_is_per_type_and_breadth_first() -> None:
    tree = Tree(Node(0, Node(0, Node(0)), Node(0)))
    triples = field_triples(tree)
    # breadth first: the root's right child (depth 2) is numbered before the grandchild (depth 3)
    assert f"{HERE}.Node.right|0|{HERE}.Node#2" in triples
    assert f"{HERE}.Node.left|1|{HERE}.Node#3" in triples
    assert f"{HERE}.Tree.root|0|{HERE}.Node#0" in triples


def test_dict_items_and_set_elements_are_ordered_by_key_not_insertion() -> None:
    one, two = Node(1), Node(2)
    forward = {"a": one, "b": two, "c": {Color.RED, "x"}}
    backward = {"c": {"x", Color.RED}, "b": Node(2), "a": Node(1)}
    assert field_triples(forward) == field_triples(backward)


def test_cycles_terminate_and_refer_back_by_number() -> None:
    a, b = Node(1), Node(2)
    a.left, b.left, b.right = b, a, b
    items: list[Any] = [a]
    items.append(items)
    triples = field_triples(items)
    assert f"{HERE}.Node.left|1|{HERE}.Node#0" in triples
    assert f"{HERE}.Node.right|1|{HERE}.Node#1" in triples
    assert "builtins.list.[1]|0|builtins.list#0" in triples


def test_aliasing_is_visible() -> None:
    shared = Node(1)
    assert field_triples(Tree(Node(0, shared, shared))) != field_triples(Tree(Node(0, Node(1), Node(1))))


@pytest.mark.parametrize(("same", "other"), [(5, 6), (-3, -100), (0.5, 0.25), ("ab", "zz"), (b"x", b"y"),
                                             (2000, 10**30), (float("nan"), float("nan"))])
def test_primitives_in_one_bucket_give_the_same_triples(same: Any, other: Any) -> None:
    assert field_triples(Node(same)) == field_triples(Node(other))


@pytest.mark.parametrize(("first", "second"), [(0, 5), (1, 5), (5, 50), (-1, 0), (True, False), (None, 0),
                                               ("", "a"), ("a", "ab"), ("ab", "x" * 40), ("12", "ab"),
                                               (0.0, 1.5), (float("inf"), 1.5), (1, 1.0), (b"", ""),
                                               (Color.RED, 1)])
def test_primitives_in_different_buckets_differ(first: Any, second: Any) -> None:
    assert field_triples(Node(first)) != field_triples(Node(second))


def test_slots_and_private_names_count_dunders_and_methods_do_not() -> None:
    triples = field_triples(Slotted("a"))
    assert f"{HERE}.Slotted._Slotted__secret|0|int:1" in triples
    assert f"{HERE}.Slotted.item|0|str:1" in triples
    assert not any(".unset|" in t for t in triples)
    node = Node(len)
    node.__dict__["__weird__"] = 1
    triples = field_triples(node)
    assert f"{HERE}.Node.value|0|callable" in triples
    assert not any("__weird__" in t for t in triples)


def test_no_project_code_runs() -> None:
    triples = field_triples(Trap())
    assert f"{HERE}.Trap.data|0|builtins.list#0" in triples
    assert "builtins.list.[0]|0|int:1" in triples


def test_separators_never_appear_inside_a_part() -> None:
    node = Node(Flags.A | Flags.B)
    node.__dict__["odd|name#1"] = 1
    for triple in field_triples(node):
        label, _, dst = triple.split("|")
        assert "#" not in label and dst.count("#") <= 1


def test_bounds_are_respected() -> None:
    head = None
    for value in range(1000):
        head = Node(value, head)
    triples = field_triples(head, max_objects=10_000, max_depth=4)
    numbers = {d for d in _destinations(triples) if d.startswith(f"{HERE}.Node#")}
    assert numbers == {f"{HERE}.Node#{n}" for n in range(5)}  # depths 0..4
    wide = [Node(i) for i in range(50)]
    triples = field_triples(wide, max_objects=10, max_depth=4)
    named = {d for d in _destinations(triples) if "#" in d and not d.endswith("#+")}
    assert len(named) == 10
    assert f"builtins.list.[8+]|0|{HERE}.Node#+" in triples
    big = list(range(100_000))
    assert len(field_triples(big)) < 20  # items beyond the first few share pseudo-fields and buckets


def test_roots_are_named_and_share_one_numbering() -> None:
    receiver = Tree(Node(1))
    returned = graph_triples([("$result", receiver), ("$arg0", receiver), ("$arg1", 3)])
    assert f"$result|-|{HERE}.Tree#0" in returned
    assert f"$arg0|-|{HERE}.Tree#0" in returned
    assert "$arg1|-|int:small" in returned


def test_same_triples_under_different_hash_seeds(tmp_path: Path) -> None:
    script = tmp_path / "walk.py"
    script.write_text(textwrap.dedent(f'''
        import importlib.util, json
        spec = importlib.util.spec_from_file_location("fields", {str(FIELDS_PY)!r})
        fields = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(fields)

        class Item:
            def __init__(self, name, payload):
                self.name, self.payload = name, payload

        words = {{"w%d" % i for i in range(30)}}
        items = {{Item("i%d" % i, [i] * (i % 3)) for i in range(20)}}
        graph = {{"words": words, "items": items, frozenset(("k", "j")): [Item("x", words)]}}
        print(json.dumps([repr(list(words)[:5]), fields.field_triples(graph)]))
    '''))

    def run(seed: str) -> list:
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, str(script)], capture_output=True, env=env, check=True,
                              timeout=60)
        return json.loads(done.stdout)

    (order_a, triples_a), (order_b, triples_b) = run("1"), run("2")
    assert order_a != order_b  # the seeds do change set iteration order
    assert triples_a == triples_b
    assert any(t.startswith("builtins.set.{}|") for t in triples_a)


# ---------------------------------------------------------------- through a real worker

SUBJECT = textwrap.dedent('''
    class Stack:
        def __init__(self):
            self.items = []

        def push(self, value):
            self.items.append(value)
            return self
''')


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[Worker]:
    root = tmp_path / "project"
    root.mkdir()
    (root / "stack.py").write_text(SUBJECT)
    checkout = Checkout("base", "0" * 40, root, (root,))
    files = (FileChange("stack.py", "stack.py", "stack", frozenset(), frozenset()),)
    options = WORKER_OPTIONS
    with Worker(checkout, ChangeSet("0" * 40, files, ()), "base", 0, options) as started:
        yield started


def test_worker_returns_fields_only_when_asked(worker: Worker) -> None:
    push = {"op": "stack:Stack.push", "args": [{"ref": 0}, {"lit": ["int", 5]}], "kwargs": {}}
    sequences = [[{"op": "stack:Stack", "args": [], "kwargs": {}}, push],
                 [{"op": "stack:Stack.push", "args": [{"lit": ["int", 1]}], "kwargs": {}}]]
    plain = worker.run(sequences, 0)
    assert plain[0].status == "ok" and plain[0].fields is None
    with_fields = worker.run(sequences, 0, fields=True)
    assert with_fields[0].fields == [
        "$arg0|-|stack.Stack#0", "$result|-|stack.Stack#0", "builtins.list.[0]|0|int:small",
        "builtins.list.len|0|int:1", "stack.Stack.items|0|builtins.list#0"]
    assert with_fields[1].status != "ok" and with_fields[1].fields is None
    assert with_fields[0].observations == plain[0].observations  # observations are unchanged by the flag
