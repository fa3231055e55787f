"""``core.text.echoed``: what a message repeats of a query (fresh-user review: a
10,000-character query came back whole in "no row matches ...")."""

from __future__ import annotations

from hypothesis import given, strategies as st

from continuity.browse.search import no_match_message
from continuity.cli.lines import no_memory_message
from continuity.core.text import ECHO_CHARS, echoed


def test_a_short_query_is_repeated_whole():
    assert echoed("export job") == "'export job'"
    assert no_match_message("zzqq") == "no row matches 'zzqq'"
    assert no_memory_message("it's") == 'no memory matches "it\'s"'


def test_a_long_query_is_cut_and_its_length_given():
    query = "deploy " * 1500  # 10,500 characters
    assert echoed(query) == repr(query[:200]) + "… (10,500 characters)"
    assert no_match_message(query) == f"no row matches {query[:200]!r}… (10,500 characters)"
    assert len(no_memory_message(query)) < 260


def test_a_lone_surrogate_is_replaced_in_the_cut_too():
    assert echoed("\ud83c" + "x" * 300) == repr("\ufffd" + "x" * 199) + "… (301 characters)"


@given(st.text(max_size=3000))
def test_an_echo_is_bounded_whatever_the_query(text: str):
    """At most ``ECHO_CHARS`` characters of the query, each at most ten as ``repr`` escapes
    it (``'\\U000e0001'``), whatever its length."""
    shown = echoed(text)
    assert len(shown) <= 10 * ECHO_CHARS + len("''… (1,000,000 characters)")


def test_a_query_holding_a_secret_is_not_repeated():
    """``search sk-ant-…`` found nothing and said the key back on standard error; a message
    never carries a secret (``redaction.funnel.shown_query``), even one the user typed."""
    key = "sk-ant-api03-" + "Q7x" * 30
    for said in (no_match_message(f"where is {key}"), no_memory_message(key)):
        assert key not in said and "Q7xQ7x" not in said
        assert said.endswith("matches <not shown: holds a secret>")


def test_counted_says_one_in_the_singular():
    """Fresh-user review: "1 files, 1 sessions", "1 path(s)"."""
    from continuity.core.text import counted

    assert [counted(n, "file") for n in (0, 1, 2)] == ["0 files", "1 file", "2 files"]
    assert counted(1, "memory", "memories") == "1 memory"
    assert counted(3, "memory", "memories") == "3 memories"
