"""The accept flow: `/difforacle accept D2` on a pull request, remembered across its pushes.

A maintainer with write access accepts a difference the pull request meant (`accept D2 D5`,
`accept all`), or asks for the analysis again (`rerun`). Nothing needs a database: what was
accepted is kept on GitHub, in a hidden block at the end of the bot's own summary comment,

    <!-- difforacle:state {"v": 1, "ids": {"D1": "<fingerprint>"}, "accepted": {...}, "handled": [...]} -->

which holds, for the latest report, which fingerprint each D-number stands for, the D-numbers
earlier reports gave that it no longer shows, every acceptance with who made it and when, and the
comments already answered (a redelivered webhook or a second step of the same workflow answers
nothing twice). The summary comment is the only place the state is read from: a state block in
anyone else's comment is ignored, and one that does not parse or breaks the shape below is
ignored with a note, never trusted in part.

Where difforacle has a secret (the App's webhook secret; the Action's `state-secret` input), the
block is **sealed**: `... {json} sig:<hex> -->`, an HMAC-SHA256 of the JSON and of the pull
request it belongs to (`pull_key`). The login alone does not tell the bot's comments from
others' (`github-actions[bot]` is every workflow of the repository): with a secret, only a
comment whose block is sealed by it is the summary, and a copy from another pull request is not.

A difference's **fingerprint** names it across pushes: the same operation (target), the same
kind and observation, on the same input (the calls of its regression test, without the checks
of base's values), hashed. It holds no path of a checkout, no line number and no value seen, so
a later push that shows the same operation misbehaving the same way on the same input keeps its
acceptance, and any other input, operation or kind of difference does not.

**D-numbers are the pull request's, not a report's**: a difference keeps the number it was first
shown under on every later push, and a number is never given to another difference
(`State.numbered`). So `accept D2` means the difference the maintainer saw as D2, even when a
push has published a newer report since. `accept all` means every difference of the report the
command was written under: the latest, unless the command is older than it (its comment id is at
most the newest one on the pull request when the latest was published, `shown_after`), then the
one before (`previous`); the reply names them.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from .markdown import regression_test
from .report_facts import acceptable

COMMAND_PREFIX = "/difforacle"
STATE_OPEN, STATE_CLOSE = "<!-- difforacle:state ", " -->"
STATE_VERSION = 1
WRITERS = ("admin", "maintain", "write")  # GitHub's permission (maintain shows as write) that may accept
HANDLED_KEPT = 50  # comment ids remembered as answered
EARLIER_KEPT = 200  # D-numbers of differences no longer shown, remembered
USAGE = ("`/difforacle accept D2` (several: `accept D2 D5`; every difference of the latest report: "
         "`accept all`), `/difforacle unaccept D2` (or `unaccept all`), `/difforacle rerun` or "
         "`/difforacle help`")
HELP = """commands, for people with write access to the repository (one per comment, on its first line):

- `/difforacle accept D2`: the difference shown as D2 was meant. It then fails no check, on this push \
and on later ones that show the same difference; several: `/difforacle accept D2 D5`; every \
difference of the report the comment was written under: `/difforacle accept all`.
- `/difforacle unaccept D2`: take an acceptance back (every one on this pull request: \
`/difforacle unaccept all`); the difference counts again from the next run.
- `/difforacle rerun`: run the analysis again on the pull request's head.
- `/difforacle help`: this list.

The D-numbers are those of the summary comment's table; they stay the same on every push."""
# lines of a regression test that are not its input: imports, its name, comments, the checks of base's values
CHECKS = ("#", "@", "import ", "from ", "def test_", "assert ", "with pytest.raises(")
SEAL_PREFIX = " sig:"  # between a sealed block's JSON and its end
_ID = re.compile(r"D[1-9][0-9]{0,5}")
_SEAL = re.compile(r"[0-9a-f]{64}")
_FINGERPRINT = re.compile(r"[0-9a-f]{16}")
_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?")
_STATE = re.compile(re.escape(STATE_OPEN) + r"(.*?)" + re.escape(STATE_CLOSE), re.DOTALL)
# the one block read: the last thing in the bot's own comment, on one line (what `encode_state` writes),
# so that no text quoted above it can open, close or shadow it
_FINAL_STATE = re.compile(re.escape(STATE_OPEN) + r"([^\n]*)" + re.escape(STATE_CLOSE) + r"\s*\Z")


# ---------------------------------------------------------------- commands


@dataclass(frozen=True)
class Command:
    """What a comment asks: `accept` or `unaccept` (its ids, or all), `rerun`, `help`, or `invalid`
    (with what is wrong)."""

    action: str  # "accept" | "unaccept" | "rerun" | "help" | "invalid"
    ids: tuple[str, ...] = ()
    all: bool = False
    problem: str = ""


def parse_command(body: str) -> Command | None:
    """The command in a comment's first non-blank line, or None when the comment is not one."""
    line = next((line.strip() for line in (body or "").splitlines() if line.strip()), "")
    words = line.replace(",", " ").split()
    if not words or words[0].lower() != COMMAND_PREFIX:
        return None
    verb, rest = (words[1].lower() if len(words) > 1 else ""), words[2:]
    if verb in ("rerun", "help") and not rest:
        return Command(verb)
    if verb in ("accept", "unaccept") and [word.lower() for word in rest] == ["all"]:
        return Command(verb, all=True)
    if verb in ("accept", "unaccept") and rest:
        ids = tuple(dict.fromkeys(word.upper() for word in rest))
        bad = [word for word in ids if not _ID.fullmatch(word)]
        if not bad:
            return Command(verb, ids)
        return Command("invalid", problem=f"{', '.join(repr(word) for word in bad)} is not a difference's id "
                       "(D1, D2, ... as in the summary's table)")
    given = " ".join(words[1:]) or "nothing"
    return Command("invalid", problem=f"{given!r} is not a command I know")


def may_accept(permission: str) -> bool:
    """GitHub's permission of the commenter on the repository lets them accept and rerun."""
    return permission in WRITERS


def is_bot(login: str, user_type: str = "") -> bool:
    """Comments by bots (ours included) are never commands."""
    return user_type == "Bot" or login.endswith("[bot]")


# ---------------------------------------------------------------- fingerprints


def fingerprint(difference: dict) -> str:
    """The difference's name across pushes: target, kind, observation and input, hashed."""
    identity = [difference.get("target", ""), difference.get("kind", ""), difference.get("key", ""),
                input_of(regression_test(difference))]
    return hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:16]


def input_of(test: str) -> str:
    """The calls of a regression test: its statements without imports, the test's name, the checks
    of base's values (asserts, `pytest.raises` lines) and comments, each on one line."""
    kept = []
    for line in test.splitlines():
        text = line.strip()
        if not text or text.startswith(CHECKS):
            continue
        kept.append(text)
    return "\n".join(kept)


# ---------------------------------------------------------------- the state


@dataclass(frozen=True)
class Acceptance:
    by: str  # the login that accepted
    at: str  # when, ISO 8601 UTC


@dataclass(frozen=True)
class State:
    """What the summary comment remembers; see the module docstring."""

    ids: dict[str, str] = field(default_factory=dict)  # D-number -> fingerprint, of the latest report
    accepted: dict[str, Acceptance] = field(default_factory=dict)  # fingerprint -> who and when
    handled: tuple[int, ...] = ()  # comment ids already answered, newest last
    earlier: dict[str, str] = field(default_factory=dict)  # D-number -> fingerprint, no longer shown
    previous: dict[str, str] = field(default_factory=dict)  # the ids of the report before the latest
    shown_after: int = 0  # the newest comment's id when the latest report was published (0: unknown)

    def accept(self, fingerprints: list[str], login: str, now: str) -> tuple[State, list[str]]:
        """The state with these accepted by `login` (earlier acceptances stay); and the newly accepted."""
        new = [f for f in dict.fromkeys(fingerprints) if f not in self.accepted]
        accepted = {**self.accepted, **{f: Acceptance(login, now) for f in new}}
        return replace(self, accepted=accepted), new

    def unaccept(self, fingerprints: list[str]) -> tuple[State, list[str]]:
        """The state without these acceptances; and those it had."""
        gone = [f for f in dict.fromkeys(fingerprints) if f in self.accepted]
        return replace(self, accepted={f: a for f, a in self.accepted.items() if f not in gone}), gone

    def answered(self, comment_id: int) -> State:
        """The state remembering that this comment was answered (no comment, as of a button's click:
        the state as it is)."""
        if comment_id <= 0:
            return self
        handled = (*[c for c in self.handled if c != comment_id], comment_id)
        return replace(self, handled=handled[-HANDLED_KEPT:])

    def numbered(self, report: dict) -> dict:
        """A copy of `report` whose differences carry this pull request's D-numbers: the number a
        difference was shown under before, else the next one never given."""
        given = {f: number for number, f in {**self.earlier, **self.ids}.items()}
        taken = [int(number[1:]) for number in (*self.earlier, *self.ids)]
        following = max(taken, default=0)
        differences = []
        for difference in report.get("differences", []):
            known = given.get(fingerprint(difference))
            if known is None or known in (d["id"] for d in differences):
                following += 1
                known = f"D{following}"
            differences.append({**difference, "id": known})
        return {**report, "differences": differences}

    def for_report(self, report: dict, newest_comment: int = 0) -> State:
        """The ids of `report` (the acceptances and answered comments carried over), those it no
        longer shows kept as `earlier`; `newest_comment`: the pull request's newest comment's id as
        the report is published (0: not read)."""
        differences = report.get("differences", [])
        ids = {d["id"]: fingerprint(d) for d in differences if acceptable(d) and d.get("id")}
        earlier = {n: f for n, f in {**self.earlier, **self.ids}.items() if n not in ids}
        return replace(self, ids=ids, earlier=dict(list(earlier.items())[-EARLIER_KEPT:]), previous=self.ids,
                       shown_after=newest_comment)

    def predates_latest(self, comment_id: int) -> bool:
        """Whether a command with this comment id was written before the latest report was published."""
        return bool(self.shown_after) and 0 < comment_id <= self.shown_after


def now_utc() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class StateSeal:
    """The secret that seals the state block, and the pull request (`owner/name#number`) it is for."""

    secret: bytes = field(repr=False)
    scope: str

    def of(self, text: str) -> str:
        return hmac.new(self.secret, f"{self.scope}\n{text}".encode(), hashlib.sha256).hexdigest()


def pull_key(repository: str, number: int) -> str:
    """"owner/name#number", GitHub's own name of a pull request: it names one across its heads (the
    App's jobs, its state, the seal of the summary's state block, our check runs' `external_id`)."""
    return f"{repository}#{number}"


def encode_state(state: State, seal: StateSeal | None = None) -> str:
    """The hidden block; its JSON holds no `>` (nor a space), so nothing can close the HTML comment
    early and the seal after it is told apart."""
    data = {"v": STATE_VERSION, "ids": state.ids,
            "accepted": {f: {"by": a.by, "at": a.at} for f, a in sorted(state.accepted.items())},
            "handled": list(state.handled)}
    if state.earlier:
        data["earlier"] = state.earlier
    if state.previous:
        data["previous"] = state.previous
    if state.shown_after:
        data["after"] = state.shown_after
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":")).replace(">", "\\u003e")
    sealed = f"{SEAL_PREFIX}{seal.of(text)}" if seal else ""
    return f"{STATE_OPEN}{text}{sealed}{STATE_CLOSE}"


def is_sealed(body: str, seal: StateSeal) -> bool:
    """Whether the comment ends with a state block sealed by `seal` (its secret, its pull request)."""
    found = _FINAL_STATE.search(body or "")
    if found is None:
        return False
    text, _, mark = found[1].rpartition(SEAL_PREFIX)
    return bool(text) and bool(_SEAL.fullmatch(mark)) and hmac.compare_digest(mark, seal.of(text))


def decode_state(body: str, seal: StateSeal | None = None) -> tuple[State, str | None]:
    """The state in a summary comment's body: (state, None); an empty state without a block; an empty
    state and why, when the block is not a state this module wrote (edited, cut, another version,
    or, given a seal, not sealed by it)."""
    found = _FINAL_STATE.search(body or "")
    if found is None:
        if STATE_OPEN in (body or ""):
            return State(), ("The summary comment's hidden state is not where difforacle writes it (at its "
                             "end); earlier acceptances are not applied. Accept again with "
                             "`/difforacle accept`.")
        return State(), None
    text = found[1].rpartition(SEAL_PREFIX)[0] or found[1]
    if seal is not None and not is_sealed(body, seal):
        return State(), ("The summary comment's hidden state is not sealed by this difforacle's secret "
                         "(written without it, or by someone else); earlier acceptances are not applied. "
                         "Accept again with `/difforacle accept`.")
    try:
        return _state_from(json.loads(text)), None
    except (ValueError, TypeError, KeyError) as exc:
        return State(), (f"The summary comment's hidden state could not be read ({_first_line(exc)}); "
                         "earlier acceptances are not applied. Accept again with `/difforacle accept`.")


def _state_from(data: Any) -> State:
    if not isinstance(data, dict) or data.get("v") != STATE_VERSION:
        raise ValueError(f"not a version {STATE_VERSION} state")
    ids, accepted, handled = data.get("ids", {}), data.get("accepted", {}), data.get("handled", [])
    earlier, previous, after = data.get("earlier", {}), data.get("previous", {}), data.get("after", 0)
    if type(after) is not int or after < 0:
        raise ValueError("its newest comment is not a comment id")
    for table in (ids, earlier, previous):
        if not isinstance(table, dict) or not all(
                isinstance(k, str) and _ID.fullmatch(k) and isinstance(v, str) and _FINGERPRINT.fullmatch(v)
                for k, v in table.items()):
            raise ValueError("its ids are not D-numbers naming fingerprints")
    if not isinstance(accepted, dict):
        raise ValueError("its acceptances are not a table")
    kept: dict[str, Acceptance] = {}
    for key, value in accepted.items():
        if not (isinstance(key, str) and _FINGERPRINT.fullmatch(key) and isinstance(value, dict)
                and isinstance(value.get("by"), str) and _LOGIN.fullmatch(value["by"])
                and isinstance(value.get("at"), str) and _timestamp(value["at"])):
            raise ValueError(f"the acceptance {str(key)[:20]!r} is malformed")
        kept[key] = Acceptance(value["by"], value["at"])
    if not isinstance(handled, list) or not all(type(c) is int and c > 0 for c in handled):
        raise ValueError("its answered comments are not comment ids")
    return State(dict(ids), kept, tuple(handled[-HANDLED_KEPT:]), dict(earlier), dict(previous), after)


def _timestamp(text: str) -> bool:
    try:
        datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return False
    return True


def with_state(body: str, state: State, seal: StateSeal | None = None) -> str:
    """`body` (a summary comment) with its state block replaced, or added at its end."""
    block = encode_state(state, seal)
    kept = _FINAL_STATE.sub("", body or "").rstrip("\n")
    return f"{kept}\n\n{block}\n"


# ---------------------------------------------------------------- applying it


def apply_acceptances(report: dict, state: State) -> dict:
    """A copy of `report` whose accepted differences carry `accepted` ({"by", "at"}): they no longer
    count (`bot.report_facts`). Minor ones and those outside the declared types count for nothing
    anyway and are left as they are."""
    differences = []
    for difference in report.get("differences", []):
        acceptance = state.accepted.get(fingerprint(difference)) if acceptable(difference) else None
        differences.append({**difference, "accepted": {"by": acceptance.by, "at": acceptance.at}}
                           if acceptance else difference)
    return {**report, "differences": differences}


@dataclass(frozen=True)
class Resolution:
    """What an `accept` command names: the pull request's D-numbers (`all`: the latest report's)."""

    fingerprints: list[str]
    ids: list[str]  # the ids accepted, in the command's order
    unknown: list[str]  # ids no report of the pull request gave an (acceptable) difference
    gone: list[str] = field(default_factory=list)  # accepted ids the latest report no longer shows
    older_report: bool = False  # `all` meant the report before the latest: the command predates it


def resolve(command: Command, state: State, comment_id: int = 0) -> Resolution:
    """The command read against the state; `comment_id`, the command's, tells which report `all` means
    (for `unaccept all`: every acceptance of the pull request)."""
    if command.action == "unaccept" and command.all:
        number_of = {f: number for number, f in {**state.earlier, **state.ids}.items()}
        taken = [f for f in state.accepted if f in number_of]
        return Resolution(taken, [number_of[f] for f in taken], [])
    if command.all:
        older = state.predates_latest(comment_id)
        seen = state.previous if older else state.ids
        return Resolution(list(seen.values()), list(seen), [], [i for i in seen if i not in state.ids],
                          older_report=older)
    numbers = {**state.earlier, **state.ids}
    known = [i for i in command.ids if i in numbers]
    return Resolution([numbers[i] for i in known], known, [i for i in command.ids if i not in numbers],
                      [i for i in known if i not in state.ids])


def reply(command: Command, login: str, resolution: Resolution | None = None, new: int = 0) -> str:
    """The answer to a writer's command, as a comment."""
    if command.action == "invalid":
        return f"@{login} {command.problem}. I understand {USAGE}."
    if command.action == "rerun":
        return f"@{login} running the analysis again on the pull request's head."
    assert resolution is not None
    parts = []
    if resolution.ids:
        named = ", ".join(resolution.ids)
        again = "" if new else " (already accepted)"
        parts.append(f"accepted {named}{again}: they no longer fail the check, on this push or on later ones "
                     "that show the same difference. Updating the check.")
    elif command.all:
        parts.append("the latest report has no difference to accept.")
    if resolution.older_report:
        parts.append("(all: the differences of the report your comment was written under; a newer report "
                     "was published since, and a difference only it shows needs its own accept.)")
    if resolution.gone:
        parts.append(f"({', '.join(resolution.gone)}: not in the latest report, so accepted for when a "
                     "later push shows it again.)")
    if resolution.unknown:
        missing = ", ".join(resolution.unknown)
        parts.append(f"the pull request's reports have no difference {missing} to accept (the ids are "
                     "those of the summary's table; minor ones and those outside the declared types "
                     "fail nothing and need no accept).")
    return f"@{login} " + " ".join(parts)


def unaccept_reply(login: str, resolution: Resolution, removed: list[str]) -> str:
    """The answer to a writer's `unaccept`: what was taken back, and what was not accepted anyway."""
    taken = [i for i, f in zip(resolution.ids, resolution.fingerprints, strict=True) if f in removed]
    parts = []
    if taken:
        parts.append(f"took back the acceptance of {', '.join(taken)}: from the next run on they count "
                     "again, as possible regressions. Updating the check.")
    elif not resolution.ids and not resolution.unknown:
        parts.append("nothing on this pull request is accepted.")
    if others := [i for i in resolution.ids if i not in taken]:
        parts.append(f"({', '.join(others)}: not accepted, nothing to take back.)")
    if resolution.unknown:
        parts.append(f"the pull request's reports have no difference {', '.join(resolution.unknown)}.")
    return f"@{login} " + " ".join(parts)


def refusal(login: str, permission: str) -> str:
    """The polite answer to anyone without write access."""
    return (f"@{login} thank you, but only people with write access to this repository can accept "
            f"differences or rerun difforacle (your access: {permission or 'none'}). A maintainer can "
            f"comment {USAGE}.")


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]
