"""The accept flow's pure parts (`difforacle.bot.acceptance`): commands, fingerprints, the hidden
state in the summary comment, and what an acceptance changes in how a report is judged."""

from __future__ import annotations

import json

import pytest
from support.report_samples import json_difference

from difforacle.bot.acceptance import (
    STATE_OPEN,
    Acceptance,
    Command,
    State,
    StateSeal,
    apply_acceptances,
    decode_state,
    encode_state,
    fingerprint,
    is_sealed,
    parse_command,
    pull_key,
    refusal,
    reply,
    resolve,
    with_state,
)
from difforacle.bot.markdown import render_markdown
from difforacle.bot.publisher import conclusion_of, wanted_failure
from difforacle.bot.report_facts import behavioural, groups, is_regression
from difforacle.bot.summary import headline

RETURN_TEST = '''from durations.parse import parse_duration


def test_parse_duration_return_matches_base():
    duration = parse_duration("1h")
    assert duration == 3600, "head: 3660"
'''
RAISES_TEST = '''import pytest

from durations.parse import parse_duration


def test_parse_duration_exception_matches_base():
    # head: raises ValueError('bad unit in /tmp/difforacle-x1/head/durations/parse.py')
    with pytest.raises(KeyError, match="^'x'$"):
        parse_duration("1x")
'''


def _difference(number: int = 1, test: str = RETURN_TEST, **fields: object) -> dict:
    return json_difference(number, **{"target": "durations.parse:parse_duration", "key": "0/0", "test": test,
                                      "pin_base": test, **fields})


def _report(*differences: dict) -> dict:
    return {"base": "a" * 40, "head": "b" * 40, "differences": list(differences),
            "coverage": {"changed_lines": 2, "changed_lines_covered": 2, "uncovered": {}},
            "stats": {"sequences": 3, "seconds": 1.0}, "notes": []}


# ---------------------------------------------------------------- commands


@pytest.mark.parametrize(("body", "command"), [
    ("/difforacle accept D2", Command("accept", ("D2",))),
    ("/difforacle accept d2, D5 D2", Command("accept", ("D2", "D5"))),
    ("  \n/difforacle accept all\nthanks!", Command("accept", all=True)),
    ("/DIFFORACLE Accept ALL", Command("accept", all=True)),
    ("/difforacle rerun", Command("rerun")),
])
def test_commands_parse(body: str, command: Command) -> None:
    assert parse_command(body) == command


@pytest.mark.parametrize("body", ["LGTM", "", "please run /difforacle accept D1", "/difforaclex accept D1",
                                  "> /difforacle accept D1"])
def test_comments_that_are_no_command_are_none(body: str) -> None:
    assert parse_command(body) is None


@pytest.mark.parametrize(("body", "problem"), [
    ("/difforacle", "'nothing' is not a command I know"),
    ("/difforacle merge", "'merge' is not a command I know"),
    ("/difforacle accept", "'accept' is not a command I know"),
    ("/difforacle accept D0 x", "'D0', 'X' is not a difference's id"),
    ("/difforacle rerun now", "'rerun now' is not a command I know"),
])
def test_bad_commands_say_what_is_wrong(body: str, problem: str) -> None:
    command = parse_command(body)
    assert command is not None and command.action == "invalid" and command.problem.startswith(problem)
    assert "I understand `/difforacle accept D2`" in reply(command, "ann")


def test_a_refusal_is_polite_and_says_who_may() -> None:
    text = refusal("eve", "read")
    assert text.startswith("@eve thank you, but only people with write access")
    assert "(your access: read)" in text


# ---------------------------------------------------------------- fingerprints


def test_the_same_difference_on_a_later_push_has_the_same_fingerprint() -> None:
    first = _difference(1, path="durations/parse.py", line=19, head="3660", count=13)
    later = _difference(4, path="src/durations/parse.py", line=57, count=2, verdict="named-by-pr")
    moved = _difference(1, test=RAISES_TEST, kind="exception")
    other_checkout = _difference(2, test=RAISES_TEST.replace("/tmp/difforacle-x1", "/work/runner/_temp/x9"),
                                 kind="exception")
    assert fingerprint(first) == fingerprint(later)
    assert fingerprint(moved) == fingerprint(other_checkout)
    assert len(fingerprint(first)) == 16 and "19" not in json.dumps(fingerprint(first))


def test_another_input_operation_or_kind_is_another_fingerprint() -> None:
    first = fingerprint(_difference())
    assert fingerprint(_difference(test=RETURN_TEST.replace('"1h"', '"2h"'))) != first
    assert fingerprint(_difference(target="durations.parse:parse_other")) != first
    assert fingerprint(_difference(kind="state")) != first
    assert fingerprint(_difference(key="0/0.unit")) != first


# ---------------------------------------------------------------- the state


def test_the_state_round_trips_inside_a_summary_comment() -> None:
    ids = {"D1": "0123456789abcdef"}
    state, new = State(ids=ids).accept(["0123456789abcdef"], "ann", "2026-01-02T03:04:05Z")
    state = state.answered(17).answered(18).answered(17)
    body = with_state("<!-- difforacle:summary -->\n\n## difforacle: a..b\n", state)
    assert new == ["0123456789abcdef"]
    assert body.startswith("<!-- difforacle:summary -->") and body.rstrip().endswith("-->")
    assert decode_state(body) == (state, None)
    assert state.handled == (18, 17)
    assert with_state(body, State()).count(STATE_OPEN) == 1  # replaced, never a second block


def test_a_state_cannot_close_its_html_comment_early() -> None:
    state = State(accepted={})
    block = encode_state(state)
    assert block.count("-->") == 1 and ">" not in block[len(STATE_OPEN):-4]


@pytest.mark.parametrize("text", [
    "{not json",
    '{"v": 2, "ids": {}}',
    '[1, 2]',
    '{"v": 1, "ids": {"D1": "not-a-fingerprint"}}',
    '{"v": 1, "ids": {}, "accepted": {"0123456789abcdef": {"by": "a b", "at": "2026-01-02T03:04:05Z"}}}',
    '{"v": 1, "ids": {}, "accepted": {"0123456789abcdef": {"by": "ann", "at": "yesterday"}}}',
    '{"v": 1, "ids": {}, "accepted": [], "handled": []}',
    '{"v": 1, "ids": {}, "accepted": {}, "handled": ["17"]}',
])
def test_a_malformed_state_is_ignored_with_a_note(text: str) -> None:
    state, problem = decode_state(f"<!-- difforacle:summary -->\n{STATE_OPEN}{text} -->\n")
    assert state == State()
    assert problem is not None
    assert problem.startswith("The summary comment's hidden state could not be read (")
    assert "\n" not in problem


def test_no_state_block_is_an_empty_state_without_a_note() -> None:
    assert decode_state("<!-- difforacle:summary -->\nolder summary") == (State(), None)


# ---------------------------------------------------------------- what acceptances change


def test_accepted_differences_fail_nothing_and_are_listed_apart() -> None:
    regression = _difference(1)
    crash = _difference(2, test=RAISES_TEST, kind="exception", head="raises ValueError", base="3600")
    report = _report(regression, crash)
    state = State().for_report(report)
    assert state.ids == {"D1": fingerprint(regression), "D2": fingerprint(crash)}
    accepted, _ = state.accept([state.ids["D2"]], "ann", "2026-01-02T03:04:05Z")

    judged = apply_acceptances(report, accepted)

    assert report["differences"][1].get("accepted") is None  # the report itself is left alone
    assert judged["differences"][1]["accepted"] == {"by": "ann", "at": "2026-01-02T03:04:05Z"}
    found = groups(judged)
    assert [d["id"] for d in found.unexplained] == ["D1"] and [d["id"] for d in found.accepted] == ["D2"]
    assert not is_regression(judged["differences"][1]) and behavioural(judged) == [judged["differences"][0]]
    assert wanted_failure(judged, "regression") is False and wanted_failure(report, "regression") is True
    markdown = render_markdown(judged)
    assert "### Accepted on the pull request" in markdown and "Accepted by @ann." in markdown
    assert "| D2 | `durations.parse:parse_duration` | exception (accepted by @ann) |" in markdown
    assert "**1 behavioural difference**" in markdown
    assert "1 difference accepted on the pull request." in markdown
    assert headline(judged).endswith(", 1 accepted (aaaaaaa..bbbbbbb)")

    everything, _ = accepted.accept(list(state.ids.values()), "bob", "2026-01-03T03:04:05Z")
    all_accepted = apply_acceptances(report, everything)
    assert conclusion_of(all_accepted, "difference") == "success"
    assert [d["accepted"]["by"] for d in all_accepted["differences"]] == ["bob", "ann"]  # the first one stays
    assert headline(all_accepted).startswith("difforacle: no behavioural difference in the 2 changed lines")


def test_minor_differences_are_not_accepted_by_all() -> None:
    minor = _difference(1, severity="minor", kind="exception")
    outside = _difference(2, verdict="outside-declared-types", test=RAISES_TEST)
    report = _report(minor, outside, _difference(3, test=RETURN_TEST.replace("1h", "3h")))
    state = State().for_report(report)
    assert list(state.ids) == ["D3"]
    resolution = resolve(Command("accept", ("D1", "D3")), state)
    assert (resolution.ids, resolution.unknown) == (["D3"], ["D1"])
    assert "no difference D1 to accept" in reply(Command("accept", ("D1", "D3")), "ann", resolution, 1)
    assert resolve(Command("accept", all=True), state).ids == ["D3"]


def test_acceptances_whose_difference_is_gone_are_kept_for_a_later_push() -> None:
    state, _ = State().accept(["0123456789abcdef"], "ann", "2026-01-02T03:04:05Z")
    later = state.for_report(_report(_difference(1)))
    assert "0123456789abcdef" in later.accepted and list(later.ids) == ["D1"]
    assert groups(apply_acceptances(_report(_difference(1)), later)).accepted == []


SEAL = StateSeal(b"repository secret", pull_key("octo/durations", 7))
SEALED_STATE = State({"D1": "0123456789abcdef"},
                     {"0123456789abcdef": Acceptance("ann", "2026-01-02T03:04:05Z")}, (11,))


def test_a_sealed_state_reads_back_only_with_its_seal_and_for_its_pull_request() -> None:
    body = with_state("<!-- difforacle:summary -->\nreport", SEALED_STATE, SEAL)
    assert is_sealed(body, SEAL) and decode_state(body, SEAL) == (SEALED_STATE, None)
    assert decode_state(body) == (SEALED_STATE, None)  # no secret: read as before
    others = (StateSeal(b"another secret", SEAL.scope),
              StateSeal(SEAL.secret, pull_key("octo/durations", 8)))
    for other in others:
        state, problem = decode_state(body, other)  # another secret, or a copy from another pull request
        assert state == State() and problem and "not sealed" in problem and not is_sealed(body, other)


def test_an_unsealed_or_altered_state_is_not_trusted_given_a_seal() -> None:
    unsealed = with_state("report", SEALED_STATE)
    assert not is_sealed(unsealed, SEAL) and decode_state(unsealed, SEAL)[0] == State()
    sealed = with_state("report", SEALED_STATE, SEAL)
    altered = sealed.replace('"by":"ann"', '"by":"eve"')
    assert altered != sealed and decode_state(altered, SEAL)[0] == State()
    resealed = with_state(altered, SEALED_STATE, SEAL)  # the writer replaces the block whole
    assert resealed.count(STATE_OPEN) == 1 and decode_state(resealed, SEAL) == (SEALED_STATE, None)


def test_numbers_stay_with_their_differences_and_are_never_given_twice() -> None:
    tests = [f"def test_x():\n    parse('{n}h')\n" for n in (1, 2, 3)]
    one, two, three = (json_difference(1, test=test, pin_base=test) for test in tests)
    assert len({fingerprint(d) for d in (one, two, three)}) == 3
    first = State().numbered({"differences": [one, two]})
    state = State().for_report(first)
    second = state.numbered({"differences": [{**three, "id": "D1"}, {**two, "id": "D2"}]})
    assert [d["id"] for d in second["differences"]] == ["D3", "D2"]
    later = state.for_report(second)
    assert later.ids == {"D3": fingerprint(three), "D2": fingerprint(two)}
    assert later.earlier == {"D1": fingerprint(one)}
    assert decode_state(encode_state(later)) == (later, None)
    back = later.numbered({"differences": [one]})  # a push that brings the first one back
    assert [d["id"] for d in back["differences"]] == ["D1"]
    broken = encode_state(later).replace('"earlier":{"D1"', '"earlier":{"X1"')
    assert decode_state(broken)[0] == State()
