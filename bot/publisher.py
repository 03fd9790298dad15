"""Publishing a report on a pull request: check run, one summary comment, one review per head.

The publisher works from the engine's JSON report and talks to GitHub only through
`GitHubClient`. Without a token, or with a read-only one (a pull request from a fork), it
falls back to what a workflow step can always do: the job summary, outputs and workflow
annotations, and says so in the log. GitHub failures are logged and never lose the
report: the outputs are written first, and when the review is refused its findings go into
the summary comment in full instead of pointing at review comments that do not exist.

Re-running the same head publishes nothing twice: the summary comment is found again by its
marker and the bot's login and edited, the review of a head is posted once, and the check run is
taken over when the caller knows it (`start(known)`: the App remembers it in its queue) or, with
`reuse_check_run`, found again among the head's check runs instead of adding one.

The summary comment also carries the pull request's hidden state (`bot.acceptance`): the
differences maintainers accepted. `finish` reads it back from the previous summary first, so
accepted differences fail nothing, get no review comment and are listed apart, then writes it
again with the new report's ids.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .acceptance import (
    State,
    StateSeal,
    apply_acceptances,
    decode_state,
    encode_state,
    is_sealed,
    pull_key,
    with_state,
)
from .anchors import DiffAnchors
from .config import COMMENT_MODES, FAIL_ON
from .github_client import (
    CheckRunOutput,
    CheckRunRef,
    GitHubClient,
    GitHubError,
    IssueComment,
    NotFound,
    ReadOnlyToken,
    ReviewComment,
)
from .report_facts import behavioural, checked_lines, coverage_measured, groups, is_regression, unexplained
from .summary import (
    ACCEPT_ALL_BUTTON,
    ACCEPT_HINT,
    NO_LONGER_DIFFERS,
    REVIEW_MARKER,
    SUMMARY_LIMIT,
    SUMMARY_MARKER,
    annotation_message,
    headline,
    review_comment,
    suggestion,
    summary_markdown,
)
from .workflow import Annotation, Workflow

ANNOTATIONS_PER_REQUEST = 50  # GitHub's limit per check run create or update
PROGRESS_INTERVAL = 60.0  # seconds between progress updates of the check run (each is a request)
CHECK_NAME = "difforacle"
ACTIONS_BOT = "github-actions[bot]"


class HeadMoved(Exception):
    """The pull request's head moved on as publishing began (`Publisher.finish`'s `still_head`)."""


@dataclass(frozen=True)
class PullRequestContext:
    repository: str  # owner/name of the base repository
    number: int
    base_sha: str
    head_sha: str
    fork: bool = False  # the head is in another repository: the workflow's token is read-only
    title: str = ""
    head_ref: str = ""
    body: str = ""  # the pull request's description: evidence of what it means to change


@dataclass(frozen=True)
class PublishSettings:
    fail_on: str = "never"
    min_reach: float = 0.8  # the share of changed lines that must run for a clean run to pass
    max_comments: int = 10
    bot_login: str = ACTIONS_BOT  # whose summary comment is ours (with the hidden marker)
    check_name: str = CHECK_NAME
    reuse_check_run: bool = False  # list the head's check runs for ours before creating one
    # seals the summary's state block (`acceptance.StateSeal`); with it, only a sealed comment is ours
    state_secret: bytes | None = field(default=None, repr=False)
    comment: str = "on-difference"  # when the summary comment is posted (`COMMENT_MODES`)
    accept_button: bool = False  # an "Accept all" button on the check run (the App answers its clicks)


@dataclass
class Published:
    conclusion: str  # success | neutral | failure
    failed: bool  # fail-on says the step fails
    check_run: CheckRunRef | None = None
    comment_id: int | None = None
    review_comments: int = 0
    errors: list[str] = field(default_factory=list)
    fallback: str | None = None  # why only the workflow's own channels were used
    completed: bool = False  # the check run was completed with the conclusion
    comment_skipped: bool = False  # no summary comment was wanted (`comment` setting): none is missing
    state_block: str = ""  # the summary comment's hidden state as written (what a later run needs of it)


def _check_settings(settings: PublishSettings) -> None:
    if settings.fail_on not in FAIL_ON:
        raise ValueError(f"fail-on must be one of {', '.join(FAIL_ON)}, not {settings.fail_on!r}")
    if settings.comment not in COMMENT_MODES:
        raise ValueError(f"comment must be one of {', '.join(COMMENT_MODES)}, not {settings.comment!r}")


def report_outputs(report: dict, report_path: str) -> dict[str, str]:
    """The step's outputs about the report (action.yml's `outputs`): its path, the count of its
    differences, and of each group the summary shows them in."""
    found = groups(report)
    return {"report": report_path, "differences": str(len(report.get("differences", []))),
            "possible-regressions": str(len(found.unexplained)), "explained": str(len(found.explained)),
            "accepted": str(len(found.accepted)), "minor": str(len(found.minor)),
            "outside-declared-types": str(len(found.outside))}


def reached_enough(report: dict, min_reach: float) -> bool:
    """Whether the run ran at least `min_reach` of the changed lines (a run without any is vacuously
    complete); unmeasured coverage never counts as reached."""
    if not coverage_measured(report):
        return False
    total, checked = checked_lines(report)
    return not total or checked >= min_reach * total


def wanted_failure(report: dict, fail_on: str, min_reach: float = 0.8) -> bool:
    differences = behavioural(report)  # minor differences fail nothing
    if fail_on == "difference":
        return bool(differences)
    if fail_on == "unexplained":
        return bool(unexplained(report))
    if fail_on == "regression":
        return any(is_regression(d) for d in differences)
    if fail_on == "unverified":
        return bool(differences) or not reached_enough(report, min_reach)
    return False


def conclusion_of(report: dict, fail_on: str, min_reach: float = 0.8) -> str:
    """failure when fail-on says so; success only for a run without differences that ran enough of
    the changed code; neutral otherwise (differences to look at, or code nothing checked)."""
    if wanted_failure(report, fail_on, min_reach):
        return "failure"
    if behavioural(report):
        return "neutral"
    return "success" if reached_enough(report, min_reach) else "neutral"


def find_summary(client: GitHubClient, number: int, bot_login: str,
                 seal: StateSeal | None = None) -> IssueComment | None:
    """Our summary comment on the pull request: the bot's login and the marker (anyone's else is not),
    and, given a seal, a state block sealed by it (the bot's login is shared: `acceptance`)."""
    return summary_among(client.issue_comments(number), bot_login, seal)


def summary_among(comments: Sequence[IssueComment], bot_login: str,
                  seal: StateSeal | None = None) -> IssueComment | None:
    """The summary among a pull request's comments (see `find_summary`)."""
    ours = [c for c in comments if c.login == bot_login and c.body.startswith(SUMMARY_MARKER)
            and (seal is None or is_sealed(c.body, seal))]
    return ours[0] if ours else None


def state_seal(settings: PublishSettings, pull: PullRequestContext) -> StateSeal | None:
    if not settings.state_secret:
        return None
    return StateSeal(settings.state_secret, pull_key(pull.repository, pull.number))


class Publisher:
    def __init__(self, client: GitHubClient | None, pull: PullRequestContext, settings: PublishSettings,
                 workflow: Workflow, clock: Callable[[], float] = time.monotonic) -> None:
        _check_settings(settings)
        self.client, self.pull, self.settings, self.workflow = client, pull, settings, workflow
        self.clock = clock
        self.check_run: CheckRunRef | None = None
        self.check_run_completed = False  # by `finish` or `abandon`: no run need come back to it
        self.errors: list[str] = []
        self.fallback: str | None = None if client is not None else "no GitHub token"
        self._last_progress = 0.0  # set by `start`
        self._summary: IssueComment | None = None  # ours, as read by `finish`
        self._summary_read = False  # whether `_summary` is what GitHub holds (None: there is none yet)
        self._summary_remembered = False  # `_summary` came from the caller, not from GitHub
        self._head_reviewed: bool | None = None  # see `finish`
        self._still_head: Callable[[], bool] | None = None  # see `finish`
        self._state_notes: list[str] = []
        self.seal = state_seal(settings, pull)
        self._newest_comment = 0  # the pull request's, when the summary was looked for (`accept all`)

    # ------------------------------------------------------------ while running

    def configure(self, settings: PublishSettings) -> None:
        """Settings for `finish` known only after `start` (the App reads the project's configuration
        from the fetched commits, after the check run is shown)."""
        _check_settings(settings)
        self.settings = settings

    def start(self, known: CheckRunRef | None = None) -> None:
        """The check run, in progress, so the pull request shows that something is happening.
        `known`: the one an earlier run of this job created (the App remembers it), taken over
        without a request. The first progress update waits PROGRESS_INTERVAL: the check run
        already says what is happening."""
        self._last_progress = self.clock()
        if self.client is None:
            return
        if known is not None:
            self.check_run = known
            return
        output = CheckRunOutput("Testing the changed code", "difforacle is generating tests on base and "
                                "replaying them on head.")
        try:
            if self.settings.reuse_check_run:
                self.check_run = self.client.find_check_run(self.settings.check_name, self.pull.head_sha,
                                                            self.settings.bot_login.removesuffix("[bot]"))
            if self.check_run is None:
                self.check_run = self.client.create_check_run(
                    self.settings.check_name, self.pull.head_sha, output,
                    external_id=pull_key(self.pull.repository, self.pull.number))
        except ReadOnlyToken as exc:
            self._fall_back(exc)
        except GitHubError as exc:
            self._error(exc)

    def progress(self, text: str) -> None:
        """Update the check run's summary, at most every PROGRESS_INTERVAL seconds, and not while the
        installation's requests run low (the results' requests come first)."""
        if self.client is None or self.check_run is None:
            return
        if self.clock() - self._last_progress < PROGRESS_INTERVAL or self.client.rate_limit_low():
            return
        self._last_progress = self.clock()
        try:
            self.client.update_check_run(self.check_run.id, CheckRunOutput("Testing the changed code", text))
        except GitHubError as exc:
            self._error(exc)

    # ------------------------------------------------------------ at the end

    def finish(self, report: dict, report_path: str, *, summary: IssueComment | None = None,
               head_reviewed: bool | None = None, still_head: Callable[[], bool] | None = None,
               newest_comment: int = 0) -> Published:
        """Review, summary comment, check run completed. What the caller remembers of earlier runs
        saves requests (the App's queue state does): `summary`, our summary comment as last written
        (its id; its body at least the hidden state), edited without listing the comments;
        `head_reviewed`, whether this head has our review (False: no run of it got so far), so the
        reviews need not be listed. None: GitHub is asked. `newest_comment`: the pull request's
        newest comment id as the caller saw it (the App's webhooks), for a remembered summary; when
        the comments are listed, the newest of those is taken instead.

        `still_head`, asked just before the review is posted (the first write, after the reads
        that prepare it): whether the commit is still the pull request's head. If not, HeadMoved
        is raised and nothing is written: a push came while publishing began."""
        settings = self.settings
        writable = self.client is not None and self.fallback is None
        self._head_reviewed = head_reviewed
        self._still_head = still_head
        if summary is not None:
            self._summary, self._summary_read, self._summary_remembered = summary, True, True
        self._newest_comment = newest_comment
        state = self._previous_state() if writable else State()
        report = state.numbered(report)  # the pull request's D-numbers: a difference keeps its number
        report = apply_acceptances(report, state)  # accepted differences count for nothing from here on
        state = state.for_report(report, self._newest_comment)
        conclusion = conclusion_of(report, settings.fail_on, settings.min_reach)
        published = Published(conclusion, wanted_failure(report, settings.fail_on, settings.min_reach),
                              self.check_run)
        self.workflow.set_outputs({**report_outputs(report, report_path), "conclusion": conclusion})
        inline: dict[str, ReviewComment] = {}
        writable = self.client is not None and self.fallback is None  # reading the state may have fallen back
        if writable:
            inline = self._review_comments(report)
            posted = self._post_review(report, inline)
            if posted is None:  # refused or failed: the summary carries those findings in full
                inline = {}
            published.review_comments = posted or 0
        block = published.state_block = encode_state(state, self.seal)
        commenting = writable and self._wants_comment(report)
        hint = [ACCEPT_HINT] if commenting and behavioural(report) else []  # only where a comment can answer
        # the report before this one (its ids, now `previous`) showed differences; this one has none
        gone = [NO_LONGER_DIFFERS] if commenting and state.previous and not report.get("differences") else []
        summary = summary_markdown(report, inline=set(inline), notes=[*gone, *self._notes(), *hint],
                                   limit=SUMMARY_LIMIT - len(block))
        self.workflow.add_summary(summary)
        if writable:
            if self.fallback is None and commenting:
                published.comment_id = self._upsert_summary(with_state(summary, state, self.seal))
            published.comment_skipped = self.fallback is None and not commenting
            # a button needs a summary comment to record its acceptances in, as a command does
            button = settings.accept_button and bool(hint) and published.comment_id is not None
            published.completed = self._complete_check_run(report, conclusion, summary, button)
        if self.fallback is not None:
            self.workflow.annotate(self._workflow_annotations(report))
            self.workflow.log(f"difforacle: {self.fallback}; the results are in the job summary "
                              "and annotations.")
        published.errors, published.fallback = self.errors, self.fallback
        return published

    def _wants_comment(self, report: dict) -> bool:
        """Whether the summary comment is posted or edited (the `comment` setting). `on-difference`:
        when the report has a difference, or to edit the summary an earlier push left (it then says
        the differences are gone, and keeps the acceptances); a clean pull request gets no comment."""
        mode = self.settings.comment
        if mode != "on-difference":
            return mode == "always"
        return bool(report.get("differences")) or self._summary is not None

    def _review_comments(self, report: dict) -> dict[str, ReviewComment]:
        """At most max-comments findings anchored on a line of the diff; the rest stay in the summary, as
        do the differences the pull request explains and those that count for nothing (minor, outside the
        declared types)."""
        assert self.client is not None
        if not unexplained(report):  # nothing to comment on: the files are not listed (a request saved)
            return {}
        try:
            anchors = DiffAnchors(self.client.pull_files(self.pull.number))
        except ReadOnlyToken as exc:
            self._fall_back(exc)
            return {}
        except GitHubError as exc:
            self._error(exc)
            return {}
        comments: dict[str, ReviewComment] = {}
        for difference in unexplained(report):
            if len(comments) >= self.settings.max_comments:
                break
            side = "LEFT" if difference.get("side") == "base" else "RIGHT"
            path, line = difference.get("path"), difference.get("line")
            if anchors.valid(path, line, side):
                comments[difference["id"]] = ReviewComment(path, line, review_comment(difference), side)
                room = len(comments) < self.settings.max_comments
                test_file = anchors.test_file_for(path) if room else None
                if test_file is not None:
                    test_path, test_line, text = test_file
                    comments[difference["id"] + "-test"] = ReviewComment(test_path, test_line,
                                                                         suggestion(difference, text))
        return comments

    def _post_review(self, report: dict, inline: dict[str, ReviewComment]) -> int | None:
        """One review per head commit: none if this head already has ours (a re-run); None if it failed."""
        assert self.client is not None
        if not inline or self.fallback is not None:
            return 0
        try:
            if self._reviewed_already():
                return 0
            if self._still_head is not None and not self._still_head():
                raise HeadMoved(f"the pull request moved on from {self.pull.head_sha[:12]} as it was "
                                "being published")
            body = f"{REVIEW_MARKER}\n{headline(report)}: the findings on the changed lines."
            self.client.create_review(self.pull.number, self.pull.head_sha, body, list(inline.values()))
        except ReadOnlyToken as exc:
            self._fall_back(exc)
            return None
        except GitHubError as exc:
            self._error(exc)
            return None
        return len(inline)

    def _reviewed_already(self) -> bool:
        """Whether this head has our review: as the caller knows it, else from the pull request's reviews."""
        assert self.client is not None
        if self._head_reviewed is not None:
            return self._head_reviewed
        return any(review.login == self.settings.bot_login and review.commit_id == self.pull.head_sha
                   and REVIEW_MARKER in review.body for review in self.client.reviews(self.pull.number))

    def _previous_state(self) -> State:
        """What the previous summary comment remembers (acceptances); empty, with a note, if unreadable."""
        assert self.client is not None
        try:
            if not self._summary_remembered:
                comments = self.client.issue_comments(self.pull.number)
                self._summary = summary_among(comments, self.settings.bot_login, self.seal)
                self._summary_read = True
                self._newest_comment = max((c.id for c in comments), default=0)
        except ReadOnlyToken as exc:
            self._fall_back(exc)
            return State()
        except GitHubError as exc:
            self._error(exc)
            return State()
        state, problem = decode_state(self._summary.body if self._summary else "", self.seal)
        if problem is not None:
            self._state_notes.append(problem)
            self.workflow.log(f"difforacle: {problem}")
        return state

    def _upsert_summary(self, body: str) -> int | None:
        """Edit our summary comment (marker and our login) or create it: never a second one."""
        assert self.client is not None
        try:
            ours = (self._summary if self._summary_read
                    else find_summary(self.client, self.pull.number, self.settings.bot_login, self.seal))
            if ours and self._summary_remembered:
                try:
                    self.client.edit_issue_comment(self.pull.number, ours.id, body)
                    return ours.id
                except NotFound:  # deleted since: look for ours again (none: a new one)
                    ours = find_summary(self.client, self.pull.number, self.settings.bot_login, self.seal)
            if ours:
                self.client.edit_issue_comment(self.pull.number, ours.id, body)
                return ours.id
            return self.client.create_issue_comment(self.pull.number, body).id
        except ReadOnlyToken as exc:
            self._fall_back(exc)
        except GitHubError as exc:
            self._error(exc)
        return None

    def _complete_check_run(self, report: dict, conclusion: str, summary: str, button: bool = False) -> bool:
        """Annotations go in batches of 50; the last request also completes the run, with the
        "Accept all" button if `button` (else without: a run taken over may have shown it)."""
        assert self.client is not None
        if self.check_run is None:
            return False
        annotations = self._check_annotations(report)
        batches = [annotations[i:i + ANNOTATIONS_PER_REQUEST]
                   for i in range(0, len(annotations), ANNOTATIONS_PER_REQUEST)] or [[]]
        title = headline(report).removeprefix("difforacle: ")
        try:
            for batch in batches[:-1]:
                self.client.update_check_run(self.check_run.id, CheckRunOutput(title, summary[:SUMMARY_LIMIT],
                                                                               annotations=batch))
            self.client.update_check_run(self.check_run.id, CheckRunOutput(title, summary[:SUMMARY_LIMIT],
                                                                           annotations=batches[-1]),
                                         conclusion=conclusion, actions=[ACCEPT_ALL_BUTTON] if button else [])
        except GitHubError as exc:
            self._error(exc)
            return False
        self.check_run_completed = True
        return True

    def abandon(self, title: str, reason: str, conclusion: str) -> bool:
        """Complete the check run without findings: the run failed, timed out or was superseded.
        Nothing else is published; True if the check run now says so."""
        if self.client is None or self.check_run is None:
            return False
        try:
            self.client.update_check_run(self.check_run.id, CheckRunOutput(title, reason[:SUMMARY_LIMIT]),
                                         conclusion=conclusion)
        except GitHubError as exc:
            self._error(exc)
            return False
        self.check_run_completed = True
        return True

    def _check_annotations(self, report: dict) -> list[dict]:
        found = []
        for difference in report.get("differences", []):
            located = difference.get("path") and difference.get("line")
            if difference.get("side", "head") != "head" or not located:
                continue  # check run annotations refer to files at the head commit
            failing = wanted_failure({"differences": [difference]}, self.settings.fail_on)
            level = "failure" if failing else "warning"
            found.append({"path": difference["path"], "start_line": difference["line"],
                          "end_line": difference["line"], "annotation_level": level,
                          "title": f"{difference['kind']} of {difference['target']} differs",
                          "message": annotation_message(difference)[:60_000]})
        return found

    def _workflow_annotations(self, report: dict) -> list[Annotation]:
        level = {True: "error", False: "warning"}
        return [Annotation(level[wanted_failure({"differences": [d]}, self.settings.fail_on)],
                           annotation_message(d), f"{d['kind']} of {d['target']} differs",
                           d.get("path") if d.get("side", "head") == "head" else None, d.get("line"))
                for d in report.get("differences", [])]

    def _notes(self) -> list[str]:
        notes = [*self._state_notes, *(f"Not everything could be published: {e}" for e in self.errors)]
        if self.fallback is not None and self.client is not None:
            notes.append(f"Published to the job summary only: {self.fallback}.")
        return notes

    def _fall_back(self, exc: GitHubError) -> None:
        self.fallback = f"{exc} (a pull request from a fork gets a read-only token)"
        self.workflow.log(f"difforacle: {self.fallback}; falling back to the job summary and annotations")

    def _error(self, exc: GitHubError) -> None:
        self.errors.append(str(exc))
        self.workflow.log(f"difforacle: {exc}")
