"""Query parsing (issue 40): quoted phrases must appear as written."""

from __future__ import annotations

from continuity.retrieval.query import parse_query


def test_parse_query_splits_words_and_phrases():
    q = parse_query('fix the "Export  Job" timeout')
    assert q.words == ("fix", "timeout") and q.phrases == ("export job",)
    assert q.terms == ["fix", "export", "job", "timeout"]
    assert parse_query('open "quote here').phrases == ("quote here",)
    assert parse_query('"" plain').phrases == () and parse_query("plain").phrases == ()


def test_phrase_matches_whole_words_case_folded():
    """issue 40: "export job" does not match "exported job"."""
    q = parse_query('"export job"')
    assert q.matches("The EXPORT\n  job failed")
    assert not q.matches("the exported job failed")
    assert not q.matches("export jobs")
    assert not q.matches("job export")
    assert parse_query('"versions/0013_x.py"').matches("see versions/0013_x.py now")
    assert parse_query('"a" "b c"').matches("b c and a") and not parse_query('"a" "b c"').matches(
        "b c only"
    )
