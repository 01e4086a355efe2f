"""parse_verify / read_verify: which text in an issue body is its own predicate."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from owed.obligations import parse_verify
from owed.obligations_verify import read_verify

NL = "\n"


def test_first_code_span_is_the_predicate_and_the_field_text_is_kept():
    body = "Please add the key." + NL + "**Verify:** `test -f x` then `echo no`" + NL + "thanks"
    assert parse_verify(body) == ("test -f x", "`test -f x` then `echo no`")


def test_marker_variants_are_all_the_field():
    for line in ("**Verify**: `a`", "**verify:** `a`", "- **Verify:** `a`", "1. **VERIFY:** `a`", "   **Verify:**`a`"):
        assert parse_verify(line)[0] == "a", line


def test_double_backtick_span_carries_a_backtick():
    assert parse_verify("**Verify:** ``test `cat f` = 1``")[0] == "test `cat f` = 1"


def test_prose_none_possible_wins_over_code_spans_in_it():
    for prose in ("none possible - `true` would lie", "None. Ask `gh` nothing.", "N/A: see `x`", "**none** `gh`"):
        predicate, text = parse_verify("**Verify:** " + prose)
        assert predicate == "" and text == prose
        assert not read_verify("**Verify:** " + prose).malformed


def test_prose_without_a_span_is_no_predicate_but_not_malformed():
    field = read_verify("**Verify:** check the billing page by eye")
    assert field == ("", "check the billing page by eye", "the Verify field is prose, with no command", False)


def test_word_starting_with_none_is_not_the_none_answer():
    assert parse_verify("**Verify:** nonexistent `test -e f`")[0] == "test -e f"


def test_quoted_examples_are_not_the_issue_own_field():
    fenced = NL.join(["~~~~md", "**Verify:** `tilde`", "~~~", "still fenced", "~~~~", "**Verify:** `real`"])
    assert parse_verify(fenced)[0] == "real"
    quoted = NL.join(["> **Verify:** `quoted`", "**Verify:** `real`"])
    assert parse_verify(quoted)[0] == "real"
    template = NL.join(["<!-- template:", "**Verify:** `example`", "-->", "**Verify:** `real`"])
    assert parse_verify(template)[0] == "real"
    indented = NL.join(["    **Verify:** `code block`", "**Verify:** `real`"])
    assert parse_verify(indented)[0] == "real"


def test_an_unclosed_fence_hides_everything_after_it():
    assert parse_verify(NL.join(["```", "**Verify:** `inside`"])) == ("", "")


def test_first_real_field_wins():
    assert parse_verify(NL.join(["**Verify:** `one`", "**Verify:** `two`"]))[0] == "one"


def test_crlf_bodies_from_github_parse():
    assert parse_verify("intro\r\n**Verify:** `true`\r\nmore") == ("true", "`true`")


def test_unterminated_and_empty_spans_are_malformed():
    unterminated = read_verify("**Verify:** `echo one &&" + NL + "echo two`")
    assert unterminated.predicate == "" and unterminated.malformed
    assert "unterminated" in unterminated.reason
    mismatched = read_verify("**Verify:** ``echo one`")
    assert mismatched.predicate == "" and mismatched.malformed
    empty = read_verify("**Verify:** `   ` then prose")
    assert empty.predicate == "" and empty.malformed and "empty" in empty.reason


def test_missing_and_empty_fields():
    assert read_verify(None) == ("", "", "no Verify field", False)
    assert read_verify("**Verify:**   ") == ("", "", "empty Verify field", False)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("`*~> -:Verifynoe\n\rx")), max_size=60))
def test_never_raises_and_the_predicate_comes_from_the_field(body):
    predicate, text = parse_verify(body)
    assert NL not in predicate and NL not in text
    assert predicate in text
    if predicate:
        assert predicate == predicate.strip()
