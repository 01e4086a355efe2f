"""parse_verify / read_verify: which text in an issue body is its own predicate."""

from __future__ import annotations

import pytest
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


@pytest.mark.parametrize(
    "line",
    [
        "Verify: `a`",  # plain label
        "verify: `a`",
        "VERIFY:`a`",
        "Verify : `a`",
        "*Verify:* `a`",
        "_Verify_: `a`",
        "__Verify:__ `a`",
        "** Verify: ** `a`",
        "- Verify: `a`",
        "> **Verify:** `a`",  # inside a blockquote
        ">**Verify:** `a`",
        "> > Verify: `a`",
        "  > - **verify**: `a`",
        "> 1. VeRiFy: `a`",
    ],
)
def test_the_field_is_found_however_it_is_marked_up(line):
    body = NL.join(["Blocked on a deploy key.", "", line, "", "thanks"])
    assert parse_verify(body) == ("a", "`a`"), line


@pytest.mark.parametrize("line", ["Verifying: `a`", "Please verify: `a`", "**Verify** `a`", "Verify `a`",
                                  "**Verify:* `a`", "    Verify: `a`", "\tVerify: `a`"])
def test_near_misses_are_not_the_field(line):
    assert parse_verify(line) == ("", "")


def test_double_backtick_span_carries_a_backtick():
    assert parse_verify("**Verify:** ``test `cat f` = 1``")[0] == "test `cat f` = 1"


def test_prose_none_possible_wins_over_code_spans_in_it():
    for prose in ("none possible - `true` would lie", "None. Ask `gh` nothing.", "N/A: see `x`", "**none** `gh`"):
        predicate, text = parse_verify("**Verify:** " + prose)
        assert predicate == "" and text == prose
        assert not read_verify("**Verify:** " + prose).malformed


def test_prose_without_a_span_is_no_predicate_but_not_malformed_and_the_prose_is_the_reason():
    field = read_verify("**Verify:** check the billing page by eye")
    assert field == ("", "check the billing page by eye", "check the billing page by eye", False)
    field = read_verify("> Verify: none possible - a judgement call.")
    assert field == ("", "none possible - a judgement call.", "none possible - a judgement call.", False)


def test_word_starting_with_none_is_not_the_none_answer():
    assert parse_verify("**Verify:** nonexistent `test -e f`")[0] == "test -e f"


def test_quoted_examples_are_not_the_issue_own_field():
    fenced = NL.join(["~~~~md", "**Verify:** `tilde`", "~~~", "still fenced", "~~~~", "**Verify:** `real`"])
    assert parse_verify(fenced)[0] == "real"
    template = NL.join(["<!-- template:", "**Verify:** `example`", "-->", "**Verify:** `real`"])
    assert parse_verify(template)[0] == "real"
    indented = NL.join(["    **Verify:** `code block`", "**Verify:** `real`"])
    assert parse_verify(indented)[0] == "real"


@pytest.mark.parametrize("label", ["**Verify:**", "Verify:", "verify:", "> **Verify:**", "_Verify:_"])
def test_a_fenced_quote_of_the_format_is_never_the_field_whatever_its_markup(label):
    for opening, closing in (("```", "```"), ("~~~", "~~~"), ("````markdown", "````")):
        body = NL.join(["What I found:", opening, f"{label} `quoted`", closing, f"{label} `real`"])
        assert parse_verify(body)[0] == "real", (label, opening)
    # a fence inside a blockquote is a fenced quote too
    body = NL.join(["> spec:", "> ```", f"> {label} `quoted`", "> ```", f"{label} `real`"])
    assert parse_verify(body)[0] == "real", label


def test_a_fence_inside_a_blockquote_ends_with_the_blockquote():
    body = NL.join(["> ```", "> **Verify:** `quoted`", "", "**Verify:** `real`"])
    assert parse_verify(body)[0] == "real"
    # inside a top-level fence, a quoted closing fence is content, not the end of the fence
    body = NL.join(["```", "> ```", "**Verify:** `still quoted`", "```", "**Verify:** `real`"])
    assert parse_verify(body)[0] == "real"


def test_a_blockquoted_field_is_the_field():
    body = NL.join(["> **Verify:** `quoted`", "**Verify:** `real`"])
    assert parse_verify(body)[0] == "quoted"  # the first field wins, quoted or not


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


@pytest.mark.parametrize(
    "prose",
    ["none of the old files remain: `! ls old/*.py`", "none needed, `true` would pass", "N/A until `v2` ships",
     "impossible to regress: `test -e x`"],
)
def test_a_field_that_only_starts_like_none_and_carries_a_span_is_malformed_not_run(prose, mk_issue):
    field = read_verify("**Verify:** " + prose)
    assert field.predicate == "" and field.malformed and "starts like 'none'" in field.reason
    from owed.obligations import owed

    ran = []
    row = owed(issues_source=[mk_issue(1, "**Verify:** " + prose)], trusted_owners="acme",
               run_predicate=lambda command: ran.append(command) or 0)["rows"][0]
    assert (row["state"], ran) == ("unknown", [])  # neither a quiet open nor half a sentence run


def test_the_documented_none_answers_with_separators():
    for prose in ("none possible — a judgement call, no `gh` query sees it", "None", "n/a", "'none possible'",
                  "No predicate: `gh` cannot see billing", "none needed by eye"):
        field = read_verify("**Verify:** " + prose)
        assert (field.predicate, field.malformed, field.reason) == ("", False, prose), prose


# The heading form: GitHub issue forms render each field as `### <label>` with its value below it.
HEADING_CASES = [
    ("### Verify\n\n`gh secret list | grep -qx N`\n\n### Other\n\nx", ("gh secret list | grep -qx N", False)),
    ("## **Verify:**\n`test -f x`", ("test -f x", False)),
    ("### Verify\n\n```shell\ntest -f x\n```\n", ("test -f x", False)),  # a form field with `render: shell`
    ("### Verify\n\n_No response_\n\n### Other\n`x`", ("", False)),  # an empty form field
    ("### Verify\n\n### Other\n`x`", ("", False)),
    ("### Verify\n\nnone possible - a judgement call.\n", ("", False)),
    ("### Verify\n\n```shell\necho a\necho b\n```\n", ("", True)),  # several lines: not one command
    ("```\n### Verify\n`quoted`\n```\n**Verify:** `real`", ("real", False)),  # a quoted example is not the field
    ("    ### Verify\n    `indented`\n", ("", False)),  # an indented code block
    ("### Verify the deploy\n`x`", ("", False)),  # a heading that only starts with the word
]


@pytest.mark.parametrize("body,want", HEADING_CASES)
def test_a_verify_heading_carries_the_field_on_the_lines_below_it(body, want):
    from owed.obligations_verify import read_verify

    field = read_verify(body)
    assert (field.predicate, field.malformed) == want, field


def test_a_verify_heading_with_a_fenced_block_of_several_lines_says_why_it_is_not_run():
    from owed.obligations_verify import read_verify

    field = read_verify("### Verify\n\n```shell\necho a\necho b\n```\n")
    assert field.malformed and field.reason == ("malformed Verify field: a fenced block of several lines is not "
                                                "one command") and field.text == "echo a echo b"


# Review defects: a commented-out example is not the field; fences close as CommonMark closes them.
COMMENT_AND_FENCE_CASES = [
    ("### Verify\n\n<!-- e.g. `rm -rf build` -->\n\n_No response_\n", ("", False)),  # one-line comment
    ("### Verify\n<!--\n`rm -rf build`\n-->\n`test -f x`\n", ("test -f x", False)),  # several lines
    ("### Verify\n<!-- example:\n`rm -rf build` -->\n", ("", False)),
    ("> ### Verify\n> <!-- `rm -rf build` -->\n> `test -f x`\n", ("test -f x", False)),
    ("**Verify:** <!-- `rm -rf build` -->", ("", False)),  # the marker form: an empty field
    ("**Verify:** <!-- e.g. `rm -rf build` --> `test -f x`", ("test -f x", False)),
    ("**Verify:** `grep -q '<!--' page.html`", ("grep -q '<!--' page.html", False)),  # a span wins
    ("### Verify\n\n```shell\ngrep -c '`' notes.md\n```\n", ("grep -c '`' notes.md", False)),  # one line
    ("### Verify\n\n````\ntest -f x\n```\necho more\n````\n", ("", True)),  # ``` does not close ````
    ("### Verify\n\n````\ntest -f x\n````\n", ("test -f x", False)),
]


@pytest.mark.parametrize("body,want", COMMENT_AND_FENCE_CASES)
def test_a_verify_field_skips_html_comments_and_closes_fences_by_length(body, want):
    from owed.obligations_verify import read_verify

    field = read_verify(body)
    assert (field.predicate, field.malformed) == want, field


def test_a_commented_marker_value_reads_as_an_empty_field():
    from owed.obligations_verify import read_verify

    assert read_verify("**Verify:** <!-- `rm -rf build` -->").reason == "empty Verify field"
