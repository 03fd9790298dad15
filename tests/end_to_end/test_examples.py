"""The project's examples (its README's code, its documentation's, the changed modules' doctests)
seed exploration as its tests do."""

from __future__ import annotations

import pytest
from support.analysis import run_analyze
from support.parts_project import CODES, CODES_BROKEN, PARTS
from support.repos import RepoBuilder, make_pr

from difforacle.generator import Options
from difforacle.generator.changes.checkout import checkouts, open_repo
from difforacle.generator.changes.units import compute_changes
from difforacle.generator.generation.seeds.carving import carve
from difforacle.generator.generation.techniques import Components

# (the project has no test)
# the README builds the code as a user would; its shell block and its other project's code are no examples
README = """\
# parts

```sh
pip install parts
```

```python
from parts.codes import describe

code = "-".join(["XK", str(4400 + 71)])
print(describe(code))
```

```python
import json
json.dumps({})
```
"""
DOCTEST = '''\
    """The part a code names.

    >>> describe("-".join(["QZ", "0" + str(900 + 82)]))
    'QZ-0982: right valve'
    """
'''
CODES_DOCUMENTED = CODES.replace('-> str:\n', '-> str:\n' + DOCTEST)


@pytest.mark.slow
def test_the_readmes_example_reaches_what_random_inputs_do_not(builder: RepoBuilder) -> None:
    make_pr(builder, {**PARTS, "README.md": README},
            {"parts/codes.py": CODES_BROKEN})
    report = run_analyze(builder, budget=20.0, max_sequences=200)
    [difference] = report.differences
    assert difference.target == "parts.codes:describe"
    assert 'describe("XK-4471")' in difference.test
    assert difference.carved_by == ["README.md:7"]  # the block's place is what carved it
    assert report.stats.techniques["examples"] == {"run": 1}
    assert report.stats.techniques["carving"]["sequences"] >= 1
    without = run_analyze(builder, budget=20.0, max_sequences=200,
                          components=Components.without(["examples"]))
    assert without.differences == []
    assert "examples" not in without.stats.techniques


def test_a_changed_modules_doctest_is_carved_from_its_modules_globals(builder: RepoBuilder) -> None:
    make_pr(builder, {**PARTS, "parts/codes.py": CODES_DOCUMENTED},
            {"parts/codes.py": CODES_DOCUMENTED.replace("{names[code]}", "{names[code].upper()}")})
    repo = open_repo(builder.root)
    with checkouts(repo, "main", "feature") as (base, head):
        changes = compute_changes(repo, repo.git.rev_parse("main"), repo.git.rev_parse("feature"), base, head)
        carving = carve(changes, base, head, Options().python, 30.0)
        without = carve(changes, base, head, Options().python, 30.0, examples=False)
    assert carving.examples == 1
    call = {"op": "parts.codes:describe", "args": [{"lit": ["str", "QZ-0982"]}], "kwargs": {}}
    assert [call] in carving.sequences
    assert set().union(*carving.sources.values()) == {"parts/codes.py:7 (describe)"}
    assert without.sequences == [] and without.examples == 0
