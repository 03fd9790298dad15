"""Text quoted from the pull request (a title in a difference's evidence, a near miss) cannot pass for
the bot's words, ping anyone, or touch the summary comment's hidden state, whatever it holds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from support.report_samples import sample_difference, sample_report

from difforacle.bot.acceptance import Acceptance, State, decode_state, with_state
from difforacle.bot.markdown import quoted_text
from difforacle.bot.summary import SUMMARY_MARKER, summary_markdown
from difforacle.generator import report_to_json

HOSTILE = ["<!-- difforacle:state ", " -->", "<!--", "@org/team", "**", "`", "[x](http://e.vil)", "\n## ",
           "<details>", "</details>", "|", "\\", "difforacle: no behavioural difference"]
STATE = State({"D1": "0123456789abcdef"}, {"0123456789abcdef": Acceptance("ann", "2026-01-02T03:04:05Z")},
              (7,))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=20)), max_size=12).map("".join))
def test_any_title_leaves_the_state_and_the_headline_the_bots(title: str) -> None:
    report = sample_report()
    report.differences = [sample_difference(1)]
    data = report_to_json(report)
    data["differences"][0]["evidence"] = f'named by the pull request, in the title: "{title}"'
    data["differences"][0]["closest"] = [f'the body names it, but says its change keeps behaviour: "{title}"']
    data["differences"][0]["verdict"] = "named-by-pr"
    data["notes"] = [f"A note quoting {title}"]
    body = with_state(summary_markdown(data), STATE)
    assert decode_state(body) == (STATE, None)
    assert body.startswith(SUMMARY_MARKER + "\n\n## difforacle: ")
    assert body.count("<!--") == 2  # the marker and the state: none from the title
    assert "@org" not in body.replace("@\u2060", "")  # no mention of anyone
    assert f'in the title: "{quoted_text(title)}"' in body  # the quote, as plain text
    assert "http://e.vil" not in body  # no link, not even one GitHub would make of a bare address


@given(st.text())
def test_quoted_text_is_one_line_without_markup_or_html(text: str) -> None:
    quoted = quoted_text(text)
    assert "\n" not in quoted and "<" not in quoted and ">" not in quoted
    unescaped = quoted.replace("\\\\", "")
    for mark in "*_`[]|~#":
        assert all(unescaped[i - 1] == "\\" for i, c in enumerate(unescaped) if c == mark and i), mark
