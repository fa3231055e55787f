"""The consolidation pass (issue 6): it runs only over completed transcripts, writes the
session's artifacts and manifest, extracts durable user statements but never transient state
(B63), and keeps thread heads and the temporal DAG; the shared sample sessions end to end."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from continuity.cli.app import app
from continuity.continuation.summarize.extractive import ExtractiveSummarizer
from continuity.core.errors import InputError
from continuity.core.model import (
    CompactionInfo,
    Entry,
    EntryKind,
    Role,
    Run,
    RunStatus,
    Session,
)
from continuity.formats.importer import import_paths
from continuity.lineage import artifacts as ln, consolidation as co, durable_memory as dm
from continuity.lineage.memory_md import SECTIONS
from continuity.lineage.temporal_dag import thread_of
from continuity.transcripts.session_transcripts import sync_import, sync_session
from tests.builders import A, T, U, call
from tests.paths import SAMPLE_DIRS

T0 = datetime(2026, 9, 1, 8, 0, tzinfo=UTC)
NOW = datetime(2026, 9, 2, 12, 0, tzinfo=UTC)
PROJECT = "/home/ana/ledger"
runner = CliRunner()


def make_session(
    store,
    key: str,
    rows: list[Entry],
    *,
    project: str | None = PROJECT,
    start: datetime = T0,
    completed: datetime | None = NOW,
    last_status: RunStatus = RunStatus.FINISHED,
) -> str:
    """A claude-code session of ``rows`` (one minute apart), its runs, and its transcript
    captured (and completed at ``completed`` unless None)."""
    store.upsert_session(
        Session(
            key=key,
            harness="claude-code",
            project=project,
            started_at=start,
            ended_at=start + timedelta(minutes=len(rows) - 1),
        )
    )
    base = store.get_session(key).entry_count
    for i, e in enumerate(rows):
        e.seq, e.timestamp = base + i, start + timedelta(minutes=i)
    store.append(key, rows)
    reqs = [e.seq for e in rows if e.is_request]
    store.put_runs(
        [
            Run(
                f"{key}:{s}",
                key,
                "default",
                s,
                last_status if i == len(reqs) - 1 else RunStatus.FINISHED,
                (reqs[i + 1] - 1) if i + 1 < len(reqs) else rows[-1].seq,
            )
            for i, s in enumerate(reqs)
        ]
    )
    sync_session(store, key, completed_at=completed, fsync=False)
    return key


def ledger_rows() -> list[Entry]:
    return [
        U("Fix the March export in export.py. Always run the migrations before the tests."),
        A(call("c1", "Edit", file_path="src/export.py"), text="I'll fix month_range."),
        T("c1"),
        A(text="Fixed: month_range treated the end month as exclusive."),
    ]


def run(store, key: str, **kw):  # type: ignore[no-untyped-def]
    return co.consolidate(store, key, summarizer=ExtractiveSummarizer(), now=NOW, **kw)


def md_files(home: Path) -> list[str]:
    return sorted(p.name for p in (home / "memory").glob("*.md"))


# --------------------------------------------------------------------------- the pass


def test_consolidate_writes_manifest_transcript_and_summary(store, isolated_home):
    """A completed session gets its manifest, transcript and summary, named by capture time."""
    make_session(store, "s1", ledger_rows())
    done = run(store, "s1")
    token = ln.session_token("default", "s1")
    assert done.status == "consolidated" and done.summary_status == "completed"
    assert md_files(isolated_home) == [
        f"2026-09-02T12-00-00.000Z--{token}--{k}.md" for k in ("manifest", "summary", "transcript")
    ]
    summary = ln.read_artifact(isolated_home / done.artifacts["summary"])
    assert summary.fields["memory_sentence_quality"] == "fallback"
    assert summary.fields["memory_sentence"] == (
        "In ledger on 2026-09-01, a claude-code session worked on: Fix the March export in "
        "export.py, changing export.py."
    )
    assert summary.body.startswith("## Goal\n- Latest request (#0): Fix the March export")
    transcript = ln.read_artifact(isolated_home / done.artifacts["transcript"])
    assert transcript.body.startswith("User: Fix the March export in export.py.")
    assert "[tool call: Edit]" in transcript.body and "ok c1" not in transcript.body
    manifest = ln.read_artifact(isolated_home / done.artifacts["manifest"])
    assert manifest.fields["revision"] == 2
    assert manifest.fields["summary_path"] == done.artifacts["summary"]
    assert (
        manifest.fields["canonical_transcript_path"]
        == "memory/claude-code/transcripts/transcript.jsonl"
    )


def test_consolidate_again_changes_nothing(store, isolated_home):
    """A second pass over the same transcript writes no file and keeps the revision."""
    make_session(store, "s1", ledger_rows())
    first = run(store, "s1")
    before = {n: (isolated_home / "memory" / n).read_bytes() for n in md_files(isolated_home)}
    again = run(store, "s1")
    assert (again.status, again.created, again.manifest_revision) == (
        "unchanged",
        [],
        first.manifest_revision,
    )
    assert {
        n: (isolated_home / "memory" / n).read_bytes() for n in md_files(isolated_home)
    } == before
    assert co.pending(store) == []


def test_mid_session_checkpoint_never_starts_the_pass(store, isolated_home):
    """An open transcript with a continuation checkpoint is left alone: no artifact, no node."""
    rows = [
        *ledger_rows(),
        Entry(
            EntryKind.COMPACTION,
            Role.SYSTEM,
            (),
            compaction=CompactionInfo("Summary so far", 3, None, True, "s1:0", "settled_turn"),
        ),
    ]
    make_session(store, "s1", rows, completed=None)
    assert run(store, "s1").status == "not_completed"
    report = co.run_pass(store, summarizer=ExtractiveSummarizer(), render=False, now=NOW)
    assert report.results == [] and md_files(isolated_home) == []
    assert store.dag_nodes("default") == [] and store.count_memories() == 0


def test_a_new_capture_supersedes_the_earlier_one(store, isolated_home):
    """A resumed session completed again gets new artifacts; the old ones stay, listed as
    superseded in the one manifest, their bytes unchanged."""
    make_session(store, "s1", ledger_rows())
    first = run(store, "s1")
    old = (isolated_home / first.artifacts["transcript"]).read_bytes()
    make_session(
        store,
        "s1",
        [U("Now add a leap-year test"), A(text="Added.")],
        start=T0 + timedelta(hours=1),
        completed=NOW + timedelta(hours=1),
    )
    second = co.consolidate(
        store, "s1", summarizer=ExtractiveSummarizer(), now=NOW + timedelta(hours=1)
    )
    assert second.artifacts["transcript"] != first.artifacts["transcript"]
    manifest = ln.read_artifact(isolated_home / second.artifacts["manifest"])
    assert manifest.path.name == Path(first.artifacts["manifest"]).name
    assert manifest.fields["superseded"] == [
        first.artifacts["transcript"],
        first.artifacts["summary"],
    ]
    assert manifest.fields["transcript_path"] == second.artifacts["transcript"]
    assert (isolated_home / first.artifacts["transcript"]).read_bytes() == old
    assert len(md_files(isolated_home)) == 5


def test_compaction_rows_give_an_artifact_nodes_and_edges(store, isolated_home):
    """Compaction rows become the compaction artifact, DAG nodes and compacted_into edges."""
    rows = [
        *ledger_rows(),
        Entry(
            EntryKind.COMPACTION,
            Role.SYSTEM,
            (),
            compaction=CompactionInfo("**Progress**\n- Export fixed in src/export.py", 3),
        ),
        U("Now add the leap-year test"),
        A(text="Done."),
    ]
    make_session(store, "s1", rows)
    done = run(store, "s1")
    art = ln.read_artifact(isolated_home / done.artifacts["compaction"])
    assert art.body.startswith(
        "## Compaction 1 of 1\n\n2026-09-01T08:04:00.000Z · row #4 · "
        "covers rows #0-#3 · harness compaction"
    )
    assert art.fields["memory_sentence"] == (
        "In ledger on 2026-09-01, a claude-code session was compacted once; the latest summary "
        "covers rows through #3 and starts with: Export fixed in src/export.py."
    )
    manifest = ln.read_artifact(isolated_home / done.artifacts["manifest"])
    assert manifest.fields["compaction_path"] == done.artifacts["compaction"]
    edges = store.dag_edges("default", kinds=["compacted_into"])
    token = ln.session_token("default", "s1")
    assert [(e.src_id, e.dst_id) for e in edges] == [(f"session:{token}", f"compaction:{token}:4")]


def test_thread_chain_and_head_do_not_depend_on_order(store, isolated_home):
    """Two sessions of one project: consolidated newest first, the later still continues the
    earlier and stays the thread head; the user naming another project mentions its thread."""
    make_session(store, "old", [U("Set up the ledger repository layout"), A(text="Done.")])
    make_session(
        store,
        "new",
        [U("Port the parser from /home/ana/ledger to /home/ana/books"), A(text="Ported.")],
        start=T0 + timedelta(days=1),
    )
    make_session(
        store,
        "books",
        [U("Start the books project layout"), A(text="Ok.")],
        project="/home/ana/books",
        start=T0 - timedelta(days=1),
    )
    for key in ("books", "new", "old"):
        run(store, key)
    tok = {k: f"session:{ln.session_token('default', k)}" for k in ("old", "new")}
    cont = store.dag_edges("default", kinds=["continues"])
    assert [(e.src_id, e.dst_id, e.at) for e in cont] == [
        (tok["new"], tok["old"], T0 + timedelta(days=1))
    ]
    assert store.thread_head("default", f"project:{PROJECT}").session_key == "new"
    mentioned = {
        e.dst_id for e in store.dag_edges("default", kinds=["mentions"]) if e.src_id == tok["new"]
    }
    assert mentioned == {thread_of("default", p, "")[2] for p in (PROJECT, "/home/ana/books")}


def test_interrupted_last_request_is_an_open_item(store, isolated_home):
    """A thread whose latest session's last request was interrupted carries it as open."""
    make_session(
        store,
        "s1",
        [
            U("Fix the export"),
            A(text="Fixed."),
            U("Now speed up the import of big CSV files"),
            A(call("c9", "Bash", command="pytest -x")),
        ],
        last_status=RunStatus.INTERRUPTED,
    )
    run(store, "s1")
    got = store.thread_head("default", f"project:{PROJECT}")
    assert got.open_items[0] == (
        "last request interrupted: Now speed up the import of big CSV files"
    )
    assert any("pytest -x" in i for i in got.open_items[1:])


# --------------------------------------------------------------------------- durable memories

B63_SESSION = [
    "The worker writes its scratch output to /tmp/xyz/out.json, always check it there.",
    "queue depth 14 right now, it must drain before we deploy.",
    "It seems the consumer never acks; I think that is the bug.",
    "Always run the migrations before the integration tests.",
    "We decided to use orjson instead of the json module for the exporter.",
    "There are 3 pending jobs in the retry queue, never restart it by hand.",
    "The export job runs at 02:00 UTC on the ledger-prod host.",
]


def test_consolidate_stores_no_transient_state_as_durable_fact(store, isolated_home):
    """B63: a debugging session with temp paths, queue counts and hedged conclusions stores
    only the durable constraint, decision and fact."""
    make_session(
        store,
        "dbg",
        [U(t) if i == 0 else U(t, request=False) for i, t in enumerate(B63_SESSION)]
        + [A(text="Noted.")],
    )
    done = run(store, "dbg")
    stored = sorted((m.type, m.content) for m, _ in store.ranked_memories("default"))
    assert stored == [
        ("constraint", "Always run the migrations before the integration tests."),
        ("decision", "We decided to use orjson instead of the json module for the exporter."),
        ("fact", "The export job runs at 02:00 UTC on the ledger-prod host."),
    ]
    assert done.transient_skipped == 3 and done.memories_added == 3
    assert not any("/tmp" in c or "14" in c or "pending" in c for _, c in stored)


def test_scratch_sessions_store_no_memories(store, isolated_home):
    """A session in a temp folder gets its artifacts but gives no durable memory."""
    make_session(
        store,
        "scratch",
        [U("Always run the migrations before the tests."), A(text="Ok.")],
        project="/tmp/play",
    )
    done = run(store, "scratch")
    assert done.status == "consolidated" and store.count_memories() == 0


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("invalid themes must NEVER explode", "constraint"),
        ("setTheme should return an error the caller can show", "constraint"),
        ("let's use sqlite for the cache layer", "decision"),
        # issue 39 supersedes this one's "fact": a colour being tuned is no durable fact
        ("green diff is #b5bd68", None),
        ("8abeb7 is what bullet is in old pi", None),
        ("md link is actually 666666", None),
        ("The export job runs at 02:00 UTC on the ledger-prod host.", "fact"),
        ("make muted a little brighter", None),
        ("the bullet should be that", None),
        ("this is what we had before", None),
    ],
)
def test_classify_user_statements(text, kind):
    """Constraints, decisions and concrete facts are recognised; requests and vague ones not."""
    assert dm.classify(text) == kind


def test_durable_statements_caps_and_orders():
    """Constraints come first, repeats once, at most MAX_MEMORIES_PER_SESSION in all."""
    texts = [f"Rule {i}: always keep file{i}.py small." for i in range(20)] + [
        "ok, ALWAYS keep file0.py small.",
        "green diff is #b5bd68",
    ]
    found, transient = dm.durable_statements(texts)
    assert len(found) == dm.MAX_MEMORIES_PER_SESSION and transient == 0
    assert found[0] == ("constraint", "Rule 0: always keep file0.py small.")
    assert all(k == "constraint" for k, _ in found)


# --------------------------------------------------------------------------- shared data, CLI


def test_shared_data_every_session_gets_verified_artifacts(
    sqlite_store, shared_data, isolated_home
):
    """Importing ../shared/data and running the pass gives every session a manifest,
    transcript and summary that verify, the compaction of compact-codex-001, and MEMORY.md."""
    report = import_paths(sqlite_store, SAMPLE_DIRS)
    sync_import(sqlite_store, report)
    done = co.run_pass(sqlite_store, summarizer=ExtractiveSummarizer(), now=NOW)
    keys = {f.session_key for f in report.files if f.session_key}
    assert {r.session_key for r in done.results} == keys and len(keys) == 12
    for r in done.results:
        assert {"manifest", "transcript", "summary"} <= set(r.artifacts), r.session_key
        for rel in r.artifacts.values():
            ln.read_artifact(isolated_home / rel)
    compacted = next(r for r in done.results if r.session_key == "compact-codex-001")
    assert "compaction" in compacted.artifacts
    text = (isolated_home / "MEMORY.md").read_text()
    assert [ln_ for ln_ in text.splitlines() if ln_.startswith("## ")] == [
        f"## {s}" for s in SECTIONS
    ]
    assert "invalid themes must NEVER explode" in text
    assert "/var/folders" not in text.split("## Durable Notes")[1]


def test_cli_consolidate_lineage_and_render(shared_data, isolated_home):
    """`consolidate --all`, `lineage KEY --json` and `memory render --output -` work together."""
    assert runner.invoke(app, ["import", str(shared_data / "codex")]).exit_code == 0
    out = runner.invoke(app, ["consolidate", "--all", "--json"])
    assert out.exit_code == 0, out.output
    sessions = json.loads(out.stdout)["sessions"]
    assert {s["status"] for s in sessions} == {"consolidated"} and len(sessions) == 5
    view = runner.invoke(app, ["lineage", "compact-codex-001", "--json"])
    data = json.loads(view.stdout)
    assert sorted(a["kind"] for a in data["artifacts"]) == [
        "compaction",
        "manifest",
        "summary",
        "transcript",
    ]
    assert {a["check"] for a in data["artifacts"]} == {"ok"}
    assert data["thread"]["label"] == "/home/testuser/codex-compact-project"
    shown = runner.invoke(app, ["memory", "render", "--output", "-"])
    assert shown.stdout == (isolated_home / "MEMORY.md").read_text()
    bad = runner.invoke(app, ["consolidate"])
    assert isinstance(bad.exception, InputError) and "SESSION or --all" in str(bad.exception)


class FakeModel:
    """A model provider: a structured summary for summary requests, one sentence otherwise."""

    name, max_input_bytes, max_summary_bytes, min_seconds = "fake", None, 24_000, 0.0

    def generate(self, request, *, cancel, deadline):  # type: ignore[no-untyped-def]
        from continuity.continuation.summarize import ProviderReply

        if request.system.startswith("Write exactly one sentence"):
            assert "Project: /home/ana/ledger" in request.prompt
            return ProviderReply(
                "The ledger session fixed month_range in src/export.py so "
                "the March export includes the final month again.\nExtra."
            )
        return ProviderReply(
            "## Goal\n- fix\n## Progress\n### Done\n- fixed\n## Next steps\n"
            "- [todo] add a leap-year test\n"
        )


def test_a_configured_model_writes_the_memory_sentence(store, isolated_home):
    """With a model provider the summary and its sentence come from the model (quality ok)."""
    make_session(store, "s1", ledger_rows())
    model = FakeModel()
    done = co.consolidate(
        store, "s1", summarizer=model, sentence_writer=co.model_writer(model), now=NOW
    )
    art = ln.read_artifact(isolated_home / done.artifacts["summary"])
    assert art.fields["memory_sentence"] == (
        "The ledger session fixed month_range in "
        "src/export.py so the March export includes the "
        "final month again."
    )
    assert (art.fields["memory_sentence_quality"], art.fields["summarizer"]) == ("ok", "fake")
    head = store.thread_head("default", f"project:{PROJECT}")
    assert head.open_items == ("next: add a leap-year test",)


def test_a_transcript_without_a_session_log_gets_its_transcript(store, isolated_home):
    """A completed row from `remember` (no imported log) gets a transcript artifact only."""
    from continuity.transcripts.session_transcripts import put_transcript

    put_transcript(store, "manual-1", "User: hi", completed_at=NOW, now=NOW)
    done = run(store, "manual-1")
    assert (done.status, done.summary_status) == ("consolidated", "empty")
    assert set(done.artifacts) == {"manifest", "transcript"}
    assert store.thread_heads("default") == []


# --------------------------------------------------------------------------- damaged lineage

SHORT = "55604662-cf2a-4331-851a-ec234028f8ca"


def consolidated_short(shared_data: Path) -> dict[str, str]:
    """short.jsonl imported and consolidated through the CLI; its artifacts by kind."""
    assert (
        runner.invoke(app, ["import", str(shared_data / "claude-code" / "short.jsonl")]).exit_code
        == 0
    )
    out = runner.invoke(app, ["consolidate", SHORT, "--json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)["sessions"][0]["artifacts"]


def test_cli_lineage_reports_an_edited_and_a_missing_artifact_with_exit_7(
    shared_data, isolated_home
):
    """An edited summary frontmatter and a deleted transcript are listed (check failed,
    missing) and `lineage` exits 7 saying how to repair."""
    arts = consolidated_short(shared_data)
    summary = isolated_home / arts["summary"]
    summary.write_text(summary.read_text().replace('memory_sentence: "', 'memory_sentence: "X'))
    (isolated_home / arts["transcript"]).unlink()
    out = runner.invoke(app, ["lineage", SHORT, "--json"])
    assert isinstance(out.exception, ln.LineageDamaged) and out.exception.exit_code == 7
    data = json.loads(out.stdout)
    checks = {p["path"]: p["check"] for p in data["problems"]}
    assert checks[arts["transcript"]] == "missing"
    assert checks[arts["summary"]] == (
        f"{summary}: frontmatter mismatch: a field no longer "
        "matches its frontmatter_sha256 (edited or damaged)"
    )
    assert str(out.exception) == (
        f"the lineage of session {SHORT} is damaged: summary {arts['summary']} failed its "
        f"check, transcript {arts['transcript']} missing; to repair: delete each damaged "
        f"file listed above and run `continuity consolidate {SHORT}` again"
    )
    text = runner.invoke(app, ["lineage", SHORT])
    assert f"transcript {arts['transcript']}  [missing]" in text.stdout


def test_cli_consolidate_on_a_damaged_artifact_says_how_to_repair(shared_data, isolated_home):
    """`consolidate SESSION` over an edited summary exits 7 (not 4) naming the file and the
    repair; doing the repair makes the lineage whole again."""
    arts = consolidated_short(shared_data)
    summary = isolated_home / arts["summary"]
    summary.write_text(summary.read_text().replace('memory_sentence: "', 'memory_sentence: "X'))
    (isolated_home / "memory").joinpath(Path(arts["manifest"]).name).unlink()
    out = runner.invoke(app, ["consolidate", SHORT])
    assert isinstance(out.exception, ln.LineageDamaged) and out.exception.exit_code == 7
    assert str(out.exception) == (
        f"{summary}: frontmatter mismatch: a field no longer matches its frontmatter_sha256 "
        f"(edited or damaged); to repair: delete {summary} and run `continuity consolidate "
        f"{SHORT}` again"
    )
    assert f"{SHORT}: damaged" in out.stdout
    summary.unlink()
    assert runner.invoke(app, ["consolidate", SHORT]).exit_code == 0
    view = runner.invoke(app, ["lineage", SHORT, "--json"])
    assert view.exit_code == 0 and json.loads(view.stdout)["problems"] == []


def test_run_pass_goes_on_after_a_damaged_session(store, isolated_home):
    """One damaged session is reported as such; the next one is consolidated."""
    for key in ("s1", "s2"):
        make_session(store, key, ledger_rows())
    first = co.run_pass(store, summarizer=ExtractiveSummarizer(), render=False, now=NOW)
    s1 = next(r for r in first.results if r.session_key == "s1")
    manifest = isolated_home / s1.artifacts["manifest"]
    manifest.write_text(manifest.read_text().replace("Lineage of session", "Lineage of"))
    make_session(store, "s3", ledger_rows())
    again = co.run_pass(
        store, sessions=["s1", "s3"], summarizer=ExtractiveSummarizer(), render=False, now=NOW
    )
    assert [(r.session_key, r.status) for r in again.results] == [
        ("s1", "damaged"),
        ("s3", "consolidated"),
    ]
    assert again.results[0].error == (
        f"{manifest}: checksum mismatch: the body does not match its content_sha256 (edited "
        "or damaged); to repair: delete " + str(manifest) + " and run `continuity consolidate "
        "s1` again"
    )


# --------------------------------------------------------------------------- issue 22: temp files


def test_killed_consolidation_temp_file_is_removed_by_the_next_run(sqlite_store, isolated_home):
    """A pass killed after writing an artifact's temp file (before its rename) leaves
    `.tmp-<token>-*.md`; the next pass deletes it (its session lock is free) and completes.
    Before issue 22 the file stayed for good."""
    import os

    make_session(sqlite_store, "s1", ledger_rows())
    token = ln.session_token("default", "s1")
    pid = os.fork()
    if pid == 0:  # the killed writer
        try:
            sqlite_store.engine.dispose(close=False)
            os.replace = lambda *_a, **_k: os._exit(9)  # killed between fsync and rename
            run(sqlite_store, "s1")
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 9
    left = sorted(p.name for p in (isolated_home / "memory").glob(".tmp-*"))
    assert len(left) == 1 and left[0].startswith(".tmp-") and left[0].endswith(".md")
    done = run(sqlite_store, "s1")
    assert sorted(p.name for p in (isolated_home / "memory").glob(".tmp-*")) == []
    assert done.status == "consolidated" and done.temp_files_removed == left
    assert left[0].startswith(f".tmp-{token}-")  # named after the session whose lock guards it
    assert md_files(isolated_home) == [
        f"2026-09-02T12-00-00.000Z--{token}--{k}.md" for k in ("manifest", "summary", "transcript")
    ]


def test_sweep_temp_files_only_stale_ones_of_ours(isolated_home):
    """The sweep deletes a token temp file whose session lock is free and an old-style one
    older than STALE_TEMP_SECONDS; it keeps the temp file of a live writer (lock held), a
    fresh old-style one, and every name not ours."""
    import os

    folder = isolated_home / "memory"
    folder.mkdir(parents=True)
    live, idle = ln.session_token("default", "live"), ln.session_token("default", "idle")
    names = [
        f".tmp-{idle}-ab12_x9k.md",
        f".tmp-{live}-zz99qq00.md",
        ".tmp-oldxyz12.md",
        ".tmp-newxyz12.md",
        ".tmp-notes.txt",
        "notes.md",
        ".tmp-a b.md",
        f".tmp-{idle}-ab12.md.bak",
    ]
    for name in names:
        (folder / name).write_text("half an artifact")
    now = 1_800_000_000.0
    for name in names:
        age = 2 * ln.STALE_TEMP_SECONDS if name != ".tmp-newxyz12.md" else 60
        os.utime(folder / name, (now - age, now - age))
    with ln.session_lock(isolated_home, live):
        removed = ln.sweep_temp_files(isolated_home, now=now)
    assert removed == sorted([f".tmp-{idle}-ab12_x9k.md", ".tmp-oldxyz12.md"])
    assert sorted(p.name for p in folder.iterdir() if p.is_file()) == sorted(
        set(names) - set(removed)
    )


def test_consolidate_keeps_no_secret_a_user_named_in_prose(store, isolated_home):
    """The review of prose secrets: "The secret is X" is a durable fact by its shape, and the
    consolidation pass (memories, summary, transcript, manifest) stores it with X redacted,
    since every derived text passes the funnel; so for the other prose forms."""
    said = [
        "The secret is SecretIsValue-73.",
        "The staging password is: 'QuotedPw-4242'.",
        "Use UseAsPw-Secret1 as the password for the admin user.",
        "Le mot de passe est Mdp-Secret42.",
    ]
    make_session(
        store,
        "sec",
        [
            U("Deploy the ledger to staging."),
            *[U(t, request=False) for t in said],
            A(text="Noted."),
        ],
    )
    done = run(store, "sec")
    assert done.status == "consolidated"
    stored = [m.content for m, _ in store.ranked_memories("default")]
    assert "The secret is [REDACTED:secret]." in stored
    # the derived markdown artifacts (the canonical transcript.jsonl stays lossless, B29)
    written = "\n".join(p.read_text(encoding="utf-8") for p in isolated_home.rglob("*.md"))
    texts = "\n".join(stored) + written
    for secret in ("SecretIsValue-73", "QuotedPw-4242", "UseAsPw-Secret1", "Mdp-Secret42"):
        assert secret not in texts
    assert "[REDACTED:secret]" in written


def test_memory_md_of_real_sessions_holds_what_they_did_and_no_junk(
    sqlite_store, shared_data, isolated_home
):
    """Issue 39: MEMORY.md showed "[fact] 8abeb7 is what bullet is in old pi". Its facts and
    thread heads now come from the extraction the summary uses: per session the request,
    the outcome, the files changed, a decision and the unresolved error, from the real pi,
    Codex and Claude Code sessions; no tuned colour value as a fact, no harness protocol
    error as open work."""
    files = [
        shared_data / "pi" / "large-session.jsonl",
        shared_data / "codex" / "with-compaction.jsonl",
        shared_data / "claude-code" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
    ]
    report = import_paths(sqlite_store, files)
    sync_import(sqlite_store, report)
    co.run_pass(sqlite_store, summarizer=ExtractiveSummarizer(), now=NOW)
    text = (isolated_home / "MEMORY.md").read_text()
    head = text.split("## Thread Heads (Tier 2)\n", 1)[1].split("\n## ", 1)[0]
    pi = next(r for r in head.splitlines() if "session d703a1a9" in r)
    assert "asked: read packages/coding-agent/docs/theme.md in full, then theme.ts" in pi
    assert (
        "last request: yeah, do it all; outcome: Oh wait, these errors look like we "
        "have API mismatches" in pi
    )
    assert "changed: test-theme-colors.ts (created), CHANGELOG.md (modified)" in pi
    assert (
        "unresolved: `cd /Users/dev/workspaces/pi-mono && npm run publish` failed: npm "
        "error command sh -c tsgo -p tsconfig.build.json" in pi
    )
    codex = next(r for r in head.splitlines() if "session compact-codex-001" in r)
    assert (
        "last request: Now add the authentication middleware; outcome: Authentication "
        "middleware is now in place; changed: auth.py (created)" in codex
    )
    demo = next(r for r in head.splitlines() if "session 5c0375b4" in r)
    assert "changed: CLAUDE.md (modified)" in demo and "tool_use_error" not in demo
    facts = text.split("## Global Head (Tier 1)\n", 1)[1].split("\n## ", 1)[0]
    assert (
        "- [decision] The theme loader should catch this error gracefully instead of "
        "crashing. (pi-mono, 2025-11-21)" in facts
    )
    for junk in ("8abeb7", "81a2be", "666666", "#b5bd68", "[fact]"):
        assert junk not in facts, junk
    opened = text.split("## Open Threads\n", 1)[1].split("\n## ", 1)[0]
    assert (
        "unresolved: bash `cd /Users/dev/workspaces/pi-mono && npm run publish` failed "
        "(#1007): npm error command" in opened
    )
    assert "tool_use_error" not in opened and "in progress: #" not in opened
