"""The memory store: remember (redaction, de-duplication, the separate transcript transaction),
recall (full-text ranking, filters, agent scope, expand), the API models, the FTS index of
revision 0007, and the `remember` / `recall` commands."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text
from typer.testing import CliRunner

from continuity.cli.app import app
from continuity.core.errors import InputError, StoreError
from continuity.store import HEAD_REVISION, migrate, open_store
from continuity.transcripts import memories as rc, session_transcripts as tr
from tests.conftest import BACKENDS

#: The daemon serves loopback Host values only (issue 16); TestClient's default is "testserver".
LOCAL = "http://127.0.0.1"

T0 = datetime(2026, 9, 1, 8, 0, tzinfo=UTC)
TRANSCRIPT = (
    "User: Why does the nightly export skip March?\n\n"
    'Tool call: Bash\n  {"command":"cat export.py"}\n\n'
    "Tool result: def month_range(): SECRET-FILE-BODY\n\n"
    "Assistant: month_range excludes the end month."
)


def ids(response: rc.RecallResponse) -> list[str]:
    return [r.content for r in response.results]


# --------------------------------------------------------------------------- remember


def test_remember_stores_redacted_content_and_its_hash(store):
    """The stored text is redacted; its hash is the SHA-256 of that stored text."""
    done = rc.remember(
        store,
        "  deploy key is sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123  ",
        tags=["ops"],
        importance=0.8,
        now=T0,
    )
    assert "sk-ant-api03" not in done.content and "[REDACTED:" in done.content
    assert done.content == done.content.strip()
    assert done.content_hash == tr.content_hash(done.content)
    assert (done.deduped, done.tags, done.importance, done.created_at) == (False, ["ops"], 0.8, T0)
    assert done.id == rc.memory_id("default", done.content_hash)


def test_remember_dedupes_by_content_hash_per_agent(store):
    """The same text again is reported as deduplicated with the first memory's fields."""
    first = rc.remember(
        store, "Export uses half-open month ranges", type="decision", tags=["export"]
    )
    again = rc.remember(store, "Export uses half-open month ranges", type="fact", tags=["x"])
    assert again.deduped and again.id == first.id
    assert (again.type, again.tags) == ("decision", ["export"])
    other_agent = rc.remember(store, "Export uses half-open month ranges", agent_id="helper")
    assert not other_agent.deduped and other_agent.id != first.id
    assert store.count_memories("default") == 1 and store.count_memories() == 2


def test_remember_rejects_bad_fields_naming_them(store):
    """Bad input is an InputError naming the field; nothing is stored."""
    with pytest.raises(InputError, match="importance"):
        rc.remember(store, "x", importance=1.5)
    with pytest.raises(InputError, match="content"):
        rc.remember(store, "   ")
    with pytest.raises(InputError, match="tags"):
        rc.remember(store, "x", tags=[""])
    assert store.count_memories() == 0


def test_remember_refuses_a_text_that_is_only_secrets(store):
    """A fresh-user review: ``remember("AKIA...")`` stored a memory holding only its marker."""
    with pytest.raises(InputError, match=r"^content: nothing but secrets, which are redacted"):
        rc.remember(store, "AKIAIOSFODNN7EXAMPLE")
    assert store.search_memories(["redacted"], agent_id="default", limit=5) == []
    kept = rc.remember(store, "the staging AWS key is AKIAIOSFODNN7EXAMPLE")
    assert kept.content == "the staging AWS key is [REDACTED:aws-access-key]"


def test_remember_writes_transcript_row_for_source(store):
    """With transcript and source id the session's row is written (harness from the request)."""
    done = rc.remember(
        store,
        "month_range excludes the end month",
        source_id="sess-1",
        transcript=TRANSCRIPT,
        harness="claude-code",
        project="/ledger",
    )
    assert done.transcript_stored is True and done.transcript_error is None
    row = store.get_transcripts(["sess-1"], "default")["sess-1"]
    assert (row.content, row.harness, row.project) == (TRANSCRIPT, "claude-code", "/ledger")
    assert rc.remember(store, "no source", transcript=TRANSCRIPT).transcript_stored is None


def test_remember_writes_transcript_even_when_memory_is_deduplicated(store):
    """A deduplicated memory still records the transcript it came with (origin defect)."""
    rc.remember(store, "same fact")
    again = rc.remember(store, "same fact", source_id="sess-2", transcript="User: later")
    assert again.deduped and again.transcript_stored
    assert store.get_transcripts(["sess-2"], "default")["sess-2"].content == "User: later"


def test_remember_transcript_failure_never_loses_the_memory(store, monkeypatch):
    """The transcript write is a separate transaction after the memory commits: when it fails,
    the memory is already visible to another connection and stays."""
    seen_from_outside = []

    def failing_insert(row):
        with open_store(store.url) as other:  # a second connection sees only committed rows
            seen_from_outside.append(other.count_memories())
        raise StoreError("database error: disk I/O error")

    monkeypatch.setattr(store, "insert_transcript", failing_insert)
    done = rc.remember(store, "survives the failure", source_id="sess-3", transcript="User: x")
    assert seen_from_outside == [1]
    assert done.transcript_stored is False and "disk I/O error" in done.transcript_error
    monkeypatch.undo()
    assert store.count_memories() == 1
    assert store.get_transcripts(["sess-3"], "default") == {}
    assert ids(rc.recall(store, "survives")) == ["survives the failure"]


def test_remember_inside_a_batch_is_refused(store):
    """Inside store.batch() the two transactions could not be separate: refused."""
    with pytest.raises(RuntimeError, match="batch"), store.batch():
        rc.remember(store, "x")
    assert store.count_memories() == 0


ANT_KEY = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123"


def test_remember_redacts_tags_and_source_id(store):
    """Each tag and source_id are redacted before storing; the transcript is keyed by the
    stored (redacted) source id."""
    done = rc.remember(
        store,
        "ops note",
        type="note",
        tags=["ops", f"key {ANT_KEY}"],
        source_id=f"sess {ANT_KEY}",
        transcript="User: hi",
    )
    stored = store.memory_by_hash("default", done.content_hash)
    assert stored.type == done.type == "note"
    assert stored.tags == ("ops", "key [REDACTED:anthropic-key]")
    assert stored.source_id == done.source_id == "sess [REDACTED:anthropic-key]"
    assert done.transcript_stored is True
    assert list(store.get_transcripts([stored.source_id], "default")) == [stored.source_id]


def test_remember_clips_a_redacted_tag_longer_than_its_column(store):
    """A 100-character tag whose marker makes it longer is clipped to 100 with an ellipsis."""
    tag = "x" * 87 + " pwd=hunter2x"
    assert len(tag) == 100
    done = rc.remember(store, "clipped tag", tags=[tag])
    assert done.tags == ["x" * 87 + " pwd=[REDACT\u2026"]
    assert len(done.tags[0]) == 100 and "hunter2x" not in done.tags[0]


def test_memory_types_are_a_closed_set(store):
    """type is one of MEMORY_TYPES (case and spaces folded); another value is refused naming
    the field and listing the allowed values, and nothing is stored."""
    assert rc.MEMORY_TYPES == (
        "fact",
        "decision",
        "constraint",
        "preference",
        "procedure",
        "note",
        "rule",
    )
    assert rc.remember(store, "picked", type=" Decision ").type == "decision"
    assert rc.remember(store, "plain").type == "fact"
    with pytest.raises(InputError) as caught:
        rc.remember(store, "x", type="todo")
    assert str(caught.value) == (
        "type: must be one of 'fact', 'decision', 'constraint', 'preference', 'procedure', "
        "'note' or 'rule' (got 'todo')"
    )
    with pytest.raises(InputError, match="type"):
        rc.remember(store, "x", type="PGPASSWORD=S3cretPass99")
    assert store.count_memories() == 2


def test_cli_remember_bad_type_exits_2_listing_types(tmp_path, monkeypatch, capsys):
    """`continuity remember --type todo` exits 2 naming the field and the allowed values."""
    from continuity.cli.app import main

    monkeypatch.setattr(
        "sys.argv", ["continuity", "remember", "x", "--type", "todo", "--home", str(tmp_path / "h")]
    )
    with pytest.raises(SystemExit) as caught:
        main()
    assert caught.value.code == 2
    message = " ".join(capsys.readouterr().err.split())
    assert "type: must be one of 'fact', 'decision', 'constraint'" in message
    assert "(got 'todo')" in message


def test_api_remember_bad_type_is_422_naming_the_field(store, isolated_home):
    """The daemon's /api/memory/remember validates type with the same model (422, field)."""
    from fastapi.testclient import TestClient

    from continuity.daemon.server import create_app
    from tests.daemon.test_server import _live

    with TestClient(create_app(_live(store, isolated_home)), base_url=LOCAL) as client:
        bad = client.post("/api/memory/remember", json={"content": "x", "type": "todo"})
        assert bad.status_code == 422
        assert "body.type" in bad.json()["detail"] and "'procedure'" in bad.json()["detail"]
        ok = client.post("/api/memory/remember", json={"content": "x", "type": "rule"})
        assert ok.status_code == 200 and ok.json()["type"] == "rule"
    assert store.count_memories() == 1


def test_remember_error_never_echoes_a_secret(store):
    """A refused value holding a secret is named, never shown."""
    with pytest.raises(InputError, match="type") as caught:
        rc.remember(store, "x", type=f"{'t' * 30} {ANT_KEY}")
    assert ANT_KEY[:12] not in str(caught.value)
    assert "<not shown: holds a secret>" in str(caught.value)
    with pytest.raises(InputError, match="tags") as caught:
        rc.remember(store, "x", tags=["", "password=hunter2x"])
    assert "hunter2x" not in str(caught.value)
    assert store.count_memories() == 0


def test_remember_error_clips_a_long_value(store):
    """A long refused value is shown as at most 40 characters ending in an ellipsis."""
    with pytest.raises(InputError) as caught:
        rc.remember(store, "x", type="a" * 500)
    message = str(caught.value)
    assert "(got '" + "a" * 38 + "\u2026)" in message and "a" * 39 not in message


def test_error_echo_shapes():
    """error_echo: short reprs as is, long ones clipped, secrets anywhere inside hidden."""
    assert rc.error_echo(1.5) == "1.5"
    assert rc.error_echo("abc") == "'abc'"
    assert rc.error_echo("b" * 100) == "'" + "b" * 38 + "\u2026"
    assert rc.error_echo({"k": ["ok", "token=ghp_abcdefghij1234567890abcdefghij123456"]}) == (
        "<not shown: holds a secret>"
    )


def test_recall_query_error_echo_is_bounded(store):
    """A query without a word is echoed clipped to 40 characters."""
    with pytest.raises(InputError, match="query") as caught:
        rc.recall(store, "?" * 300)
    assert str(caught.value) == "query: no word to search for in '" + "?" * 38 + "\u2026"


# --------------------------------------------------------------------------- recall


@pytest.fixture
def ledger(store):
    """Four memories about an export bug, a parser and a deploy."""
    for content, kw in [
        (
            "Export uses half-open month ranges; the March bug was the exclusive end month.",
            {
                "type": "decision",
                "tags": ["export", "bug"],
                "importance": 0.9,
                "source_id": "sess-1",
                "transcript": TRANSCRIPT,
            },
        ),
        ("The nightly export job runs at 2am from cron.", {"tags": ["export"], "importance": 0.3}),
        ("The parser handles tabs and spaces alike.", {"tags": ["parser"], "source_id": "sess-2"}),
        (
            "Deploys go through the staging cluster first.",
            {"type": "procedure", "source_id": "sess-9"},
        ),
    ]:
        rc.remember(store, content, **kw)
    return store


def test_recall_ranks_by_relevance(ledger):
    """More matching query words rank higher; memories matching none are absent."""
    found = rc.recall(ledger, "March export bug")
    assert ids(found)[:2] == [
        "Export uses half-open month ranges; the March bug was the exclusive end month.",
        "The nightly export job runs at 2am from cron.",
    ]
    assert len(found.results) == 2
    assert found.results[0].score > found.results[1].score


def test_recall_prefers_the_shorter_of_equal_matches(store):
    """Length normalisation: the same single match in a short memory outranks a long one."""
    rc.remember(store, "tabs " + " ".join(f"filler{i}" for i in range(40)))
    rc.remember(store, "tabs matter here")
    assert ids(rc.recall(store, "tabs"))[0] == "tabs matter here"


def test_recall_stems_english_words(ledger):
    """'exporting' finds memories that say 'export'."""
    assert len(rc.recall(ledger, "exporting").results) == 2


def test_recall_filters(ledger):
    """type, tags (all required), source_id, importance_min and limit narrow the results."""

    def recalled(**filters):
        return ids(rc.recall(ledger, "export parser deploys", filters=filters, limit=10))

    assert recalled(type="decision") == [
        "Export uses half-open month ranges; the March bug was the exclusive end month."
    ]
    assert len(recalled(tags=["export"])) == 2 and len(recalled(tags=["export", "bug"])) == 1
    assert recalled(source_id="sess-2") == ["The parser handles tabs and spaces alike."]
    assert len(recalled(importance_min=0.6)) == 1
    assert recalled(until=T0.isoformat()) == []
    assert len(recalled(since=(datetime.now(UTC) - timedelta(hours=1)).isoformat())) == 4
    assert len(rc.recall(ledger, "export parser deploys", limit=1).results) == 1


def test_recall_narrow_filter_beyond_the_ranked_prefix(ledger, monkeypatch):
    """A filter that rejects the best-ranked ids still finds the best match that meets it."""
    from continuity.store import memory as store_memory

    monkeypatch.setattr(store_memory, "FILTERED_PREFIX_FACTOR", 1)
    found = rc.recall(ledger, "export parser deploys", limit=1, filters={"type": "procedure"})
    assert ids(found) == ["Deploys go through the staging cluster first."]
    assert ids(rc.recall(ledger, "export", limit=1, filters={"tags": ["bug"]})) == [
        "Export uses half-open month ranges; the March bug was the exclusive end month."
    ]


def test_recall_ignores_stop_words(ledger):
    """Stop words neither match nor rank (as PostgreSQL's english configuration does)."""
    assert ids(rc.recall(ledger, "the export of the")) == ids(rc.recall(ledger, "export"))
    assert rc.recall(ledger, "the and of").results == []


def test_recall_is_scoped_to_the_agent(ledger):
    """Another agent's memories are never recalled."""
    rc.remember(ledger, "helper agent export note", agent_id="helper")
    assert ids(rc.recall(ledger, "helper")) == []
    assert ids(rc.recall(ledger, "helper", agent_id="helper")) == ["helper agent export note"]


def test_recall_query_without_words_is_an_input_error(ledger):
    """Punctuation only, or FTS syntax, is never passed through as a query."""
    with pytest.raises(InputError, match="query"):
        rc.recall(ledger, "*** ???")
    assert len(rc.recall(ledger, 'export" OR "x* NEAR(').results) == 2
    with pytest.raises(InputError, match="limit"):
        rc.recall(ledger, "export", limit=0)


def test_recall_expand_joins_transcripts_in_one_batched_lookup(ledger, monkeypatch):
    """expand looks every result's session up in one call; sources are sanitized by default."""
    calls = []
    original = ledger.get_transcripts

    def spy(keys, agent_id):
        calls.append(sorted(keys))
        return original(keys, agent_id)

    monkeypatch.setattr(ledger, "get_transcripts", spy)
    tr.put_transcript(ledger, "sess-2", "User: tabs?\n\nAssistant: both")
    found = rc.recall(ledger, "export parser deploys", expand=True)
    assert calls == [["sess-1", "sess-2", "sess-9"]]
    assert set(found.sources) == {"sess-1", "sess-2"}  # sess-9 has no transcript
    src = found.sources["sess-1"]
    assert src.content == (
        "User: Why does the nightly export skip March?\n\n[tool call: Bash]"
        "\n\nAssistant: month_range excludes the end month."
    )
    assert (src.sanitized, src.truncated, src.completed) == (True, False, False)
    assert rc.recall(ledger, "export").sources is None


def test_recall_expand_raw_and_bounded(ledger):
    """raw_sources gives the stored text; a small bound clips it head and tail with a flag."""
    raw = rc.recall(ledger, "March", expand=True, raw_sources=True).sources["sess-1"]
    assert raw.content == TRANSCRIPT and not raw.sanitized
    tr.put_transcript(ledger, "sess-1", "User: " + "word " * 400)
    request = rc.RecallRequest(query="March", expand=True, source_max_bytes=300)
    clipped = rc.recall_request(ledger, request).sources["sess-1"]
    assert clipped.truncated and clipped.bytes == len(("User: " + "word " * 400).strip())
    assert len(clipped.content.encode()) <= 300 and "bytes omitted" in clipped.content


# --------------------------------------------------------------------------- models


def test_models_accept_camel_case_and_a_single_tag():
    """API shapes: camelCase aliases accepted, one tag as a string, unknown fields refused."""
    req = rc.RememberRequest.model_validate(
        {"content": "x", "sourceId": "s", "tags": "a", "agentId": "helper", "sourceType": "pi"}
    )
    assert (req.source_id, req.tags, req.agent_id, req.harness) == ("s", ["a"], "helper", "pi")
    with pytest.raises(ValueError):
        rc.RecallRequest.model_validate({"query": "x", "bogus": 1})
    assert rc.RecallRequest(query="x").limit == 10


def test_response_models_serialise_to_json(ledger):
    """Responses dump to plain JSON with ISO timestamps and snake_case fields."""
    data = rc.recall(ledger, "parser", expand=True).model_dump(mode="json")
    assert set(data) == {"query", "results", "sources", "sources_truncated"}
    first = data["results"][0]
    assert set(first) == {
        "id",
        "content",
        "content_hash",
        "type",
        "tags",
        "importance",
        "source_id",
        "agent_id",
        "created_at",
        "score",
    }
    assert first["created_at"].endswith("Z") or "+00:00" in first["created_at"]


# --------------------------------------------------------------------------- FTS index (0007)


def test_fts_index_follows_updates_and_deletes(store):
    """The full-text index sees a memory's changed content and forgets a deleted one."""
    done = rc.remember(store, "original wording here")
    with store.batch(), store._conn() as conn:
        conn.execute(
            text("UPDATE memories SET content = 'rewritten phrase' WHERE memory_id = :m"),
            {"m": done.id},
        )
    assert ids(rc.recall(store, "original")) == []
    assert ids(rc.recall(store, "rewritten")) == ["rewritten phrase"]
    with store.batch(), store._conn() as conn:
        conn.execute(text("DELETE FROM memories WHERE memory_id = :m"), {"m": done.id})
    assert ids(rc.recall(store, "rewritten")) == []


@pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
def test_fts_migration_indexes_memories_from_before_it(db_url):
    """Memories stored at revision 0006 are searchable after upgrading to 0007."""
    from continuity.store import _engine

    engine = _engine(db_url)
    try:
        migrate(engine, "0006")
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO memories (memory_id, content, content_hash, type, tags, importance,"
                    " agent_id, created_at) VALUES ('m1', 'legacy remembered fact', 'h', 'fact',"
                    " '[]', 0.5, 'default', :now)"
                ),
                {"now": T0},
            )
    finally:
        engine.dispose()
    assert HEAD_REVISION >= "0007"  # open_store migrates 0006 -> head, through the FTS revision
    with open_store(db_url) as s:
        assert ids(rc.recall(s, "legacy")) == ["legacy remembered fact"]


# --------------------------------------------------------------------------- CLI

runner = CliRunner()


def test_cli_remember_then_recall_json(tmp_path):
    """remember confirms on stderr; recall --json returns the documented shape."""
    home = str(tmp_path / "h")
    first = runner.invoke(
        app,
        [
            "remember",
            "Export uses half-open ranges",
            "--tag",
            "export",
            "--type",
            "decision",
            "--home",
            home,
        ],
    )
    again = runner.invoke(app, ["remember", "Export uses half-open ranges", "--home", home])
    assert first.exit_code == 0 and "remembered" in first.stderr
    assert "already remembered" in again.stderr
    found = runner.invoke(app, ["recall", "export", "--json", "--home", home])
    data = json.loads(found.stdout)
    assert [r["content"] for r in data["results"]] == ["Export uses half-open ranges"]
    assert data["results"][0]["tags"] == ["export"] and data["sources"] is None


def test_cli_recall_expand_prints_sanitized_transcript(tmp_path):
    """recall --expand prints each result and its session's projection, no tool output."""
    home = tmp_path / "h"
    with open_store(home / "continuity.db") as s:
        rc.remember(
            s, "month_range excludes the end month", source_id="sess-1", transcript=TRANSCRIPT
        )
    result = runner.invoke(app, ["recall", "month", "--expand", "--home", str(home)])
    assert result.exit_code == 0
    assert "month_range excludes the end month" in result.stdout
    assert "[tool call: Bash]" in result.stdout and "SECRET-FILE-BODY" not in result.stdout
    empty = runner.invoke(app, ["recall", "zebra", "--home", str(home)])
    assert empty.stdout == "" and "no memory matches" in empty.stderr
