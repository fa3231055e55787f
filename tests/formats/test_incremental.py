"""Issue 17 goal 2 / issue 20: an import's cost grows with new bytes only.

A grown file appends its new transcript records (the JSONL is never rewritten, its old bytes
stay as they were), an unchanged re-import replays and renders nothing, small files share a
transaction, and what the incremental path writes equals what a fresh import of the whole file
writes.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import orjson
import pytest
from sqlalchemy import event

from continuity.checkpoints import recovery
from continuity.checkpoints.capture import CheckpointConfig
from continuity.core.errors import StoreConflict
from continuity.formats import importer
from continuity.formats.importer import import_files, import_paths
from continuity.store import open_store
from continuity.transcripts import session_transcripts as st
from continuity.transcripts.transcript_log import TranscriptLog, transcript_path
from tests.builders import stored_transcript
from tests.paths import SHARED_DATA

CLAUDE = SHARED_DATA / "claude-code" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
PI = SHARED_DATA / "pi" / "v3-short-session.jsonl"


def _lines(path: Path) -> list[bytes]:
    return [ln + b"\n" for ln in path.read_bytes().split(b"\n") if ln.strip()]


def _import(store, home: Path, path: Path):
    """What ``continuity import`` does: rows, checkpoint replay, transcripts."""
    report = import_paths(store, [path])
    replayed = recovery.replay_import(store, report, config=CheckpointConfig())
    return report, replayed, st.sync_import_report(store, report, home)


def _records(home: Path, harness: str) -> list[tuple[str, int, str, str]]:
    return [
        (r.session_key, r.seq, r.role, r.content)
        for r in TranscriptLog(transcript_path(home, harness)).read()
    ]


@pytest.mark.parametrize("sample,harness", [(CLAUDE, "claude-code"), (PI, "pi")])
def test_grown_file_appends_records_and_equals_a_fresh_import(
    tmp_path, monkeypatch, sample, harness
):
    """Half a session, then the rest: the JSONL keeps its first bytes and inode and grows by
    the new records only; the rows read to render are the new visible rows only (and the
    look-back, 2 rows here); records and row equal those of one import of the whole file."""
    monkeypatch.setattr(st, "LOOK_BACK_ROWS", 2)
    lines = _lines(sample)
    half = len(lines) // 2 if len(lines) >= 10 else len(lines) - 1  # both parts talk
    path = tmp_path / sample.name
    path.write_bytes(b"".join(lines[:half]))
    home = tmp_path / "home"
    with open_store(tmp_path / "a.db") as store:
        _, _, first = _import(store, home, path)
        log_path = transcript_path(home, harness)
        before, inode = log_path.read_bytes(), log_path.stat().st_ino
        assert first.captured == 1 and first.sessions_rewritten == 0
        with open(path, "ab") as fh:
            fh.write(b"".join(lines[half:]))
        (key0,) = [x.key for x in store.list_sessions()]
        base_before = stored_transcript(store, key0, store.get_session(key0).agent_id)
        report, _, grown = _import(store, home, path)
        new_rows = report.files[0].imported
        key = report.files[0].session_key
        base_after = stored_transcript(store, key, store.get_session(key).agent_id)
        visible_new = list(
            store.entries(
                key, after_seq=report.files[0].first_new_seq - 1, limit=10_000, visible_only=True
            )
        )
        total_visible = len(store.entries(key, limit=100_000, visible_only=True))
        after = log_path.read_bytes()
        row = store.get_transcripts([key], store.get_session(key).agent_id)[key]
    assert new_rows > 0
    assert log_path.stat().st_ino == inode  # appended in place, not replaced
    assert after.startswith(before)
    appended = after[len(before) :]
    assert appended.count(b"\n") == grown.records_appended > 0
    assert grown.sessions_rewritten == 0
    # only the new rows were read, and the few before them that check the row holds them
    assert len(visible_new) <= grown.rows_read <= len(visible_new) + st.LOOK_BACK_ROWS
    if harness == "claude-code":  # long enough that a re-read of everything shows
        assert total_visible > len(visible_new) + 2
        assert grown.rows_read < total_visible
    # the same as one import of the whole file
    home2 = tmp_path / "home2"
    whole = tmp_path / "whole" / sample.name
    whole.parent.mkdir()
    shutil.copy(sample, whole)
    with open_store(tmp_path / "b.db") as store2:
        _import(store2, home2, whole)
        row2 = store2.get_transcripts([key], store2.get_session(key).agent_id)[key]
    assert _records(home, harness) == _records(home2, harness)
    assert row.content == row2.content and row.content_hash == row2.content_hash
    # issue 17 (revision 0018): the grown row wrote only what it added, as one part
    assert key0 == key and len(base_before) == 1 and base_after[0] == base_before[0]
    assert base_after[1:] == [row.content[len(base_before[0]) :]]
    assert base_after[1].startswith("\n\n") and len(base_after[1]) > 2


def test_unchanged_reimport_replays_and_reads_nothing(tmp_path, monkeypatch):
    """A re-import of unchanged files replays 0 sessions, reads 0 rows for transcripts and
    writes no transcript byte."""
    folder = tmp_path / "in"
    folder.mkdir()
    for sample in (CLAUDE, PI):
        shutil.copy(sample, folder / sample.name)
    home = tmp_path / "home"
    with open_store(tmp_path / "a.db") as store:
        _, _replayed, first = _import(store, home, folder)
        assert first.captured == 2
        replays: list[str] = []
        real = recovery.replay_session
        monkeypatch.setattr(
            recovery,
            "replay_session",
            lambda s, key, **kw: replays.append(key) or real(s, key, **kw),
        )
        sizes = {p: p.stat().st_size for p in (home / "memory").rglob("*.jsonl")}
        report, again, sync = _import(store, home, folder)
    assert [f.status for f in report.files] == ["unchanged", "unchanged"]
    assert replays == [] and again == 0
    assert (sync.captured, sync.rows_read, sync.records_appended) == (0, 0, 0)
    assert {p: p.stat().st_size for p in sizes} == sizes


def test_unchanged_session_without_a_row_is_captured(tmp_path):
    """An unchanged file whose session has no transcript row yet (imported before transcripts
    existed) still gets one: ``sessions_without_transcript`` finds it in one query."""
    path = tmp_path / CLAUDE.name
    shutil.copy(CLAUDE, path)
    home = tmp_path / "home"
    with open_store(tmp_path / "a.db") as store:
        report = import_paths(store, [path])
        key = report.files[0].session_key
        assert store.sessions_without_transcript([key, "no-such-session"]) == [key]
        again = import_paths(store, [path])
        sync = st.sync_import_report(store, again, home)
        assert sync.captured == 1
        assert store.sessions_without_transcript([key]) == []
    assert len(_records(home, "claude-code")) > 0


def _small_files(folder: Path, count: int) -> list[Path]:
    """``count`` copies of the short Claude Code session with distinct session ids."""
    folder.mkdir()
    text = (SHARED_DATA / "claude-code" / "short.jsonl").read_text("utf-8")
    sid = next(
        orjson.loads(ln).get("sessionId")
        for ln in text.split("\n")
        if ln.strip() and "sessionId" in ln
    )
    assert sid
    out = []
    for i in range(count):
        new = f"00000000-0000-4000-8000-{i:012d}"
        p = folder / f"{new}.jsonl"
        p.write_text(text.replace(sid, new), "utf-8")
        out.append(p)
    return out


def test_small_files_share_one_transaction(tmp_path):
    """30 small files commit their writes once (issue 20: one sync per file made 10,000 files take ten
    minutes); every file is imported with its rows."""
    files = _small_files(tmp_path / "in", 30)
    with open_store(tmp_path / "a.db") as store:
        commits = []  # commits that write (sqlite3 opens a transaction at the first write)
        event.listen(
            store.engine,
            "commit",
            lambda conn: (
                commits.append(1) if conn.connection.driver_connection.in_transaction else None
            ),
        )
        reports = list(import_files(store, files))
        assert [r.status for r in reports] == ["imported"] * 30
        assert len({r.session_key for r in reports}) == 30
        assert all(r.imported > 0 and r.first_new_seq == 0 for r in reports)
        assert len(commits) == 1
        assert sum(s.entry_count for s in store.list_sessions(limit=0)) == sum(
            r.imported for r in reports
        )


def test_grown_files_share_one_transaction_and_count_their_bytes(tmp_path, monkeypatch):
    """Issue 17: a file too large to group (``GROUP_FILE_BYTES``, 4,000 bytes here) that grew
    by less than that is grouped by what it added: five files each imported alone (five
    write commits), then each grown by one line, re-import in one commit. The progress
    counts every file's whole size (it left a grown file's old bytes out, so the bar never
    reached its total). A file rewritten in place (another first line) is read whole,
    alone."""
    monkeypatch.setattr(importer, "GROUP_FILE_BYTES", 4000)
    files = _small_files(tmp_path / "in", 5)
    assert all(p.stat().st_size > 4000 for p in files)
    with open_store(tmp_path / "a.db") as store:
        commits = []
        event.listen(
            store.engine,
            "commit",
            lambda conn: (
                commits.append(1) if conn.connection.driver_connection.in_transaction else None
            ),
        )
        assert [r.status for r in import_files(store, files)] == ["imported"] * 5
        assert len(commits) == 5
        for p in files:
            last = p.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1]
            line = orjson.loads(last)
            line["uuid"] = line["uuid"][:-4] + "beef"
            with open(p, "ab") as fh:
                fh.write(orjson.dumps(line) + b"\n")
        commits.clear()
        counted = []
        reports = list(import_files(store, files, progress=counted.append))
        assert [(r.status, r.imported) for r in reports] == [("imported", 1)] * 5
        assert all(r.resumed_from > 0 for r in reports)
        assert len(commits) == 1
        assert sum(counted) == importer.total_bytes(files)
        counted.clear()
        one = files[0]
        one.write_bytes(one.read_bytes().replace(b'"type":"user"', b'"type": "user"', 1))
        (again,) = import_files(store, [one], progress=counted.append)
        assert again.status == "imported" and again.resumed_from == 0
        assert sum(counted) == one.stat().st_size
        (grown,) = import_files(store, [files[1]], progress=counted.append)
        assert grown.status == "unchanged"


def test_grown_files_among_unchanged_ones_share_one_transaction(tmp_path):
    """Issue 17: the files that grew are scattered among unchanged ones (every third of 12
    here); an unchanged file no longer ends the group, so the four grown files commit once
    (they took four commits), and the reports, and the ``done`` calls, keep the files'
    order."""
    files = _small_files(tmp_path / "in", 12)
    with open_store(tmp_path / "a.db") as store:
        assert [r.status for r in import_files(store, files)] == ["imported"] * 12
        grown = files[1::3]
        for p in grown:
            line = orjson.loads(p.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1])
            line["uuid"] = line["uuid"][:-4] + "beef"
            with open(p, "ab") as fh:
                fh.write(orjson.dumps(line) + b"\n")
        commits = []
        event.listen(
            store.engine,
            "commit",
            lambda conn: (
                commits.append(1) if conn.connection.driver_connection.in_transaction else None
            ),
        )
        seen = []
        reports = list(import_files(store, files, done=seen.append))
        assert len(commits) == 1
        assert [r.path for r in reports] == [importer.path_key(p.resolve()) for p in files]
        assert seen == reports
        assert [(r.status, r.imported) for r in reports] == [
            ("imported", 1) if p in grown else ("unchanged", 0) for p in files
        ]


def test_small_file_group_failure_is_redone_file_by_file(tmp_path, monkeypatch):
    """A collision inside a group rolls the whole group back and imports each file on its own
    (the waiting path): every file ends imported exactly once, none half-written."""
    files = _small_files(tmp_path / "in", 5)
    real = importer._import_once
    calls = {"n": 0}

    def flaky(store, p, report, progress, *rest):
        calls["n"] += 1
        if calls["n"] == 3:  # the third file of the group collides once
            real(store, p, report, progress, *rest)
            raise StoreConflict("simulated collision")
        return real(store, p, report, progress, *rest)

    monkeypatch.setattr(importer, "_import_once", flaky)
    with open_store(tmp_path / "a.db") as store:
        reports = list(import_files(store, files))
        rows = {s.key: s.entry_count for s in store.list_sessions(limit=0)}
    assert [r.status for r in reports] == ["imported"] * 5
    assert calls["n"] == 3 + 5  # the group's three attempts, then five single imports
    assert rows == {r.session_key: r.imported for r in reports}


def test_capture_missed_by_a_crash_is_repaired_on_the_next_growth(tmp_path):
    """Rows imported while the transcript phase never ran (a crash after the import's commit):
    they stay due (``SourceState.pending_from``), so the next growth renders them with its
    own new rows and appends both (it snapshotted the session before: a rewrite of the whole
    file); the transcript equals a fresh import of the whole file."""
    lines = _lines(CLAUDE)
    third = len(lines) // 3
    path = tmp_path / CLAUDE.name
    path.write_bytes(b"".join(lines[:third]))
    home = tmp_path / "home"
    with open_store(tmp_path / "a.db") as store:
        _import(store, home, path)
        with open(path, "ab") as fh:
            fh.write(b"".join(lines[third : 2 * third]))
        import_paths(store, [path])  # rows committed; the transcript phase never ran
        with open(path, "ab") as fh:
            fh.write(b"".join(lines[2 * third :]))
        report, _, sync = _import(store, home, path)
        key = report.files[0].session_key
        row = store.get_transcripts([key], store.get_session(key).agent_id)[key]
    assert sync.sessions_rewritten == 0 and sync.records_appended > 0
    assert report.files[0].pending_from is not None
    assert report.files[0].derive_from < report.files[0].first_new_seq
    whole = tmp_path / "whole" / CLAUDE.name
    whole.parent.mkdir()
    shutil.copy(CLAUDE, whole)
    with open_store(tmp_path / "b.db") as store2:
        _import(store2, tmp_path / "home2", whole)
        row2 = store2.get_transcripts([key], store2.get_session(key).agent_id)[key]
    assert row.content == row2.content
    assert _records(home, "claude-code") == _records(tmp_path / "home2", "claude-code")


def test_unchanged_files_cost_one_source_query(tmp_path):
    """A no-op re-import of 30 files reads their sources in one query and opens no file
    beyond its first bytes: every file is ``unchanged``, nothing written."""
    files = _small_files(tmp_path / "in", 30)
    with open_store(tmp_path / "a.db") as store:
        list(import_files(store, files))
        statements: list[str] = []
        event.listen(
            store.engine, "before_cursor_execute", lambda conn, cur, sql, *a: statements.append(sql)
        )
        reports = list(import_files(store, files))
    assert [r.status for r in reports] == ["unchanged"] * 30
    assert len(statements) == 1 and "FROM sources" in statements[0]


def _checkpoints(store, key):
    return [(c.trigger, c.created_at, c.digest, c.prompt_count) for c in store.checkpoints(key)]


@pytest.mark.parametrize(
    "sample",
    [
        SHARED_DATA / "claude-code" / "tool_heavy.jsonl",
        SHARED_DATA / "claude-code" / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
    ],
)
def test_grown_file_replays_from_where_it_stopped(tmp_path, monkeypatch, sample):
    """The replay of a grown file reads only the rows after its saved resume point, and the
    checkpoints equal those of a replay of the whole file imported in the same steps from
    the first row (``resume`` off)."""
    lines = _lines(sample)
    cuts = [len(lines) // 3, 2 * len(lines) // 3, len(lines)]
    config = CheckpointConfig(promptInterval=1)  # a checkpoint per prompt: many to compare
    read: list[int] = []
    real_rows = recovery._rows

    def counted(store, key, after=-1, known=None):
        for row in real_rows(store, key, after, known):
            read.append(row.seq)
            yield row

    monkeypatch.setattr(recovery, "_rows", counted)
    results = {}
    for resume in (True, False):
        path = tmp_path / f"resume-{resume}" / sample.name
        path.parent.mkdir()
        with open_store(tmp_path / f"{resume}.db") as store:
            done = 0
            for cut in cuts:
                with open(path, "ab") as fh:
                    fh.write(b"".join(lines[done:cut]))
                done = cut
                report = import_paths(store, [path])
                f = report.files[0]
                key = f.session_key
                read.clear()
                if resume:
                    recovery.replay_import(store, report, config=config)
                    if f.resumed_from:  # a grown file: rows before the new ones not reread
                        assert read and min(read) > 0
                        assert len(read) < store.get_session(key).entry_count
                else:
                    recovery.replay_session(store, key, config=config)
                    assert read[0] == 0
            results[resume] = _checkpoints(store, key)
    assert len(results[True]) >= 2  # a periodic and the session end, whose digest shows the
    # restored state (total prompts, recent prompts)
    assert results[True] == results[False]


@pytest.mark.parametrize("sample", [SHARED_DATA / "codex" / "with-compaction.jsonl", CLAUDE])
@pytest.mark.parametrize("restore", ["in place", "new inode"])
def test_a_file_cut_short_and_restored_adds_no_row_twice(tmp_path, sample, restore):
    """Fresh-user review: a Codex file cut to half, imported, then restored (``cp`` over it)
    got its second half twice: 30 rows instead of 20, a second compaction, a call id twice
    (the restored lines were read as new ones after the cut's offset). Lines an earlier
    import stored are matched by number and bytes (rows without native ids; Claude Code's
    ``file-history-snapshot`` lines have none), in place or as a new file: the session
    ends with the rows of one import, each line once."""
    lines = sample.read_bytes().splitlines(keepends=True)
    path = tmp_path / sample.name
    path.write_bytes(b"".join(lines))
    with open_store(tmp_path / "a.db") as store:
        (first,) = import_paths(store, [path]).files
        key, rows = first.session_key, first.imported
        with open(path, "r+b") as fh:  # cut in place, as `head > file` does
            fh.truncate(len(b"".join(lines[: len(lines) // 2])))
        (cut,) = import_paths(store, [path]).files
        assert (cut.imported, cut.duplicate > 0) == (0, True)
        if restore == "in place":
            with open(path, "wb") as fh:
                fh.write(b"".join(lines))
        else:
            other = tmp_path / "new.jsonl"
            other.write_bytes(b"".join(lines))
            other.replace(path)
        (back,) = import_paths(store, [path]).files
        assert back.imported == 0
        assert store.get_session(key).entry_count == rows
        stored = store.entries(key, limit=10**6)
        assert len({(e.source.line, e.source.raw_sha256) for e in stored}) == len(stored)
        (again,) = import_paths(store, [path]).files  # and nothing more later
        assert again.status == "unchanged"


def test_a_file_whose_name_is_not_utf8_is_not_reported_gone(tmp_path):
    """Fresh-user review: a session file whose name holds a byte that is not UTF-8 is stored
    under its name with ``\\xNN`` escapes (``path_key``); that text names no file, so every
    import marked the source gone and ``sessions`` showed it gone. The escaped bytes are
    tried too (``key_paths``): present while the file exists, gone once it is removed."""
    import os

    from continuity.formats.importer import key_paths, mark_vanished, path_key

    folder = tmp_path / "in"
    folder.mkdir()
    odd = Path(os.fsdecode(bytes(folder) + b"/bad\xffname.jsonl"))
    odd.write_bytes(PI.read_bytes())
    assert key_paths(path_key(odd)) == [Path(path_key(odd)), odd]
    with open_store(tmp_path / "a.db") as store:
        (f,) = import_paths(store, [folder]).files
        assert f.status == "imported" and f.path.endswith("/bad\\xffname.jsonl")
        assert mark_vanished(store, [folder]) == (0, 0)
        assert store.source_presence() == {f.path: False}
        odd.unlink()
        assert mark_vanished(store, [folder]) == (1, 0)


def test_a_file_cut_to_a_line_naming_no_session_stays_its_session(tmp_path):
    """Second review: a Claude Code file not named after its session, whose first line (a
    ``file-history-snapshot``) has no ``sessionId``, cut to that line and imported, became a
    second session keyed by the file name; restored, its 38 other rows went to that copy too
    (two sessions of 39 rows, one source). A re-read whose head names no session stays the
    file's session: one session, 39 rows."""
    sample = SHARED_DATA / "claude-code" / "tool_heavy.jsonl"
    lines = sample.read_bytes().splitlines(keepends=True)
    assert b"sessionId" not in lines[0]
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"".join(lines))
    with open_store(tmp_path / "a.db") as store:
        (first,) = import_paths(store, [path]).files
        assert first.session_key == "d6e0bada-1959-4eec-a9d2-0bfade768d8f"
        with open(path, "r+b") as fh:
            fh.truncate(len(lines[0]))
        (cut,) = import_paths(store, [path]).files
        path.write_bytes(b"".join(lines))
        (back,) = import_paths(store, [path]).files
        assert cut.session_key == back.session_key == first.session_key
        assert [(s.key, s.entry_count) for s in store.list_sessions(limit=0)] == [
            (first.session_key, first.imported)
        ]


def test_a_live_import_leaves_no_rows_due(tmp_path):
    """The daemon imports a live session's file with ``mark_due=False``: live capture writes
    its checkpoints and transcript itself, so its rows are not due for the import's replay
    and transcript phase (a later ``import`` or archiver pass would otherwise replay a live
    session and give it a session end). Rows an earlier import left due stay due."""
    from continuity.formats.importer import import_file

    lines = _lines(CLAUDE)
    path = tmp_path / CLAUDE.name
    path.write_bytes(b"".join(lines[:5]))
    with open_store(tmp_path / "a.db") as store:
        live = import_file(store, path, mark_due=False)
        assert live.imported > 0
        assert store.get_source(live.path).pending_from is None
        with open(path, "ab") as fh:
            fh.write(b"".join(lines[5:10]))
        cut = import_file(store, path)  # an import whose phases never ran
        due = store.get_source(cut.path).pending_from
        assert due == cut.first_new_seq == live.imported
        with open(path, "ab") as fh:
            fh.write(b"".join(lines[10:15]))
        import_file(store, path, mark_due=False)
        assert store.get_source(cut.path).pending_from == due


def test_an_import_that_snapshots_several_sessions_rewrites_the_file_once(tmp_path, monkeypatch):
    """Three sessions whose last row was rewritten (a new inode, the last message's text
    changed): each must be snapshotted (the row its records end with is no longer shown), and
    the JSONL is copied once for all three, not once a session (at 3 GB of history, one copy
    is seconds). Each session's records then equal a fresh import of its changed file."""
    folder = tmp_path / "in"
    folder.mkdir()
    lines = _lines(CLAUDE)
    paths = [folder / f"s{i}.jsonl" for i in range(3)]
    for p in paths:
        p.write_bytes(b"".join(lines))
    home = tmp_path / "home"
    replaced: list[str] = []
    real = os.replace
    with open_store(tmp_path / "a.db") as store:
        _import(store, home, folder)
        for p in paths:
            changed = _lines(p)
            last = next(i for i in range(len(changed) - 1, 0, -1) if b'"text":"' in changed[i])
            changed[last] = changed[last].replace(b'"text":"', b'"text":"CHANGED ', 1)
            tmp = p.with_suffix(".tmp")
            tmp.write_bytes(b"".join(changed))
            os.replace(tmp, p)
        monkeypatch.setattr(
            "continuity.transcripts.transcript_log.os.replace",
            lambda a, b: (replaced.append(str(b)), real(a, b)),
        )
        _, _, sync = _import(store, home, folder)
        monkeypatch.undo()
        keys = [f.session_key for f in import_paths(store, [folder]).files]
    log_path = transcript_path(home, "claude-code")
    assert sync.sessions_rewritten == 3 and sync.captured == 3 and sync.failed == []
    assert replaced == [str(log_path)]
    fresh = tmp_path / "fresh"
    shutil.copytree(folder, fresh)
    with open_store(tmp_path / "b.db") as store2:
        report = import_paths(store2, [fresh])
        st.sync_import_report(store2, report, tmp_path / "home2")
        fresh_keys = [f.session_key for f in report.files]

    def texts(home_dir: Path, key: str) -> list[tuple[str, str]]:
        return [
            (r.role, r.content)
            for r in TranscriptLog(transcript_path(home_dir, "claude-code")).read(session_key=key)
        ]

    for key, key2 in zip(keys, fresh_keys, strict=True):
        got = texts(home, key)
        assert got == texts(tmp_path / "home2", key2)
        assert sum("CHANGED" in c for _, c in got) == 1


def _copy_over(path: Path, data: bytes) -> None:
    """Replace ``path`` by a new file (a new inode) holding ``data``, as cp or rsync do."""
    tmp = path.with_name(path.name + ".new")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def test_a_copy_of_a_file_read_before_is_read_on_from_where_it_stopped(tmp_path):
    """The file replaced by a copy of itself (a new inode: cp, rsync, a restored backup): the
    import finds every line it kept the same, says unchanged, stores nothing and keeps the
    copy's inode (the next import is the fast unchanged check). The copy then grown (and
    copied again): only the new lines are read, and the store and transcript equal those of
    the same file grown in place."""
    lines = _lines(CLAUDE)
    half = len(lines) // 2
    folder = tmp_path / "in"
    folder.mkdir()
    path = folder / CLAUDE.name
    path.write_bytes(b"".join(lines[:half]))
    home, home2 = tmp_path / "home", tmp_path / "home2"
    twin = tmp_path / "twin" / CLAUDE.name  # the same file grown in place, to compare with
    twin.parent.mkdir()
    twin.write_bytes(b"".join(lines[:half]))
    with open_store(tmp_path / "a.db") as store, open_store(tmp_path / "b.db") as store2:
        _import(store, home, path)
        _import(store2, home2, twin)
        _copy_over(path, path.read_bytes())
        report, replayed, sync = _import(store, home, path)
        (f,) = report.files
        assert (f.status, f.imported, f.duplicate) == ("unchanged", 0, 0)
        assert replayed == 0 and sync.captured == 0
        assert store.get_source(str(path)).inode == path.stat().st_ino
        _copy_over(path, b"".join(lines))
        with open(twin, "ab") as fh:
            fh.write(b"".join(lines[half:]))
        report, _, _ = _import(store, home, path)
        (f,) = report.files
        twin_report, _, _ = _import(store2, home2, twin)
        assert f.status == "imported" and f.duplicate == 0
        assert f.resumed_from == twin_report.files[0].resumed_from > 0
        assert f.imported == twin_report.files[0].imported > 0
        key = f.session_key
        rows = [(e.seq, e.kind, e.text()) for e in store.entries(key, limit=10_000)]
        rows2 = [(e.seq, e.kind, e.text()) for e in store2.entries(key, limit=10_000)]
        assert rows == rows2
        assert [c.trigger for c in store.checkpoints(key)] == [
            c.trigger for c in store2.checkpoints(key)
        ]
    assert _records(home, "claude-code") == _records(home2, "claude-code")


def test_a_copy_with_a_line_changed_is_read_again_from_its_start(tmp_path):
    """A new inode whose lines differ from those kept (one line's text changed, the size and
    first 64 KiB the same) is not taken for a copy: it is read again from its start, as
    spec/formats.md §5.2 says, and the changed line's row is stored."""
    lines = _lines(CLAUDE)
    path = tmp_path / CLAUDE.name
    path.write_bytes(b"".join(lines))
    home = tmp_path / "home"
    changed = list(lines)
    last = next(i for i in range(len(changed) - 1, 0, -1) if b'"text":"' in changed[i])
    changed[last] = changed[last].replace(b'"text":"', b'"text":"CHANGED ', 1)
    assert len(b"".join(changed)) > 64 * 1024 and last > len(changed) // 2
    with open_store(tmp_path / "a.db") as store:
        _import(store, home, path)
        _copy_over(path, b"".join(changed))
        report, _, _ = _import(store, home, path)
        (f,) = report.files
        assert f.status == "imported" and f.resumed_from == 0 and f.imported == 1
        texts = [e.text() for e in store.entries(f.session_key, limit=10_000)]
        assert sum(t.startswith("CHANGED ") for t in texts) == 1


def test_a_copy_with_blank_lines_crlf_and_an_unfinished_last_line_is_read_on(tmp_path):
    """The line-by-line comparison sees the lines as the import read them: a blank line, a
    line ending in CRLF, and a last line still unterminated when it was read (left for later,
    then finished in the copy) do not make a copy look changed."""
    lines = _lines(CLAUDE)
    body = lines[0] + b"\n" + lines[1].rstrip(b"\n") + b"\r\n" + b"".join(lines[2:6])
    tail = lines[6].rstrip(b"\n")
    path = tmp_path / CLAUDE.name
    path.write_bytes(body + tail[:40])  # a line being written
    home = tmp_path / "home"
    with open_store(tmp_path / "a.db") as store:
        _import(store, home, path)
        before = store.get_source(str(path))
        assert before.offset == len(body)
        _copy_over(path, body + tail + b"\n" + b"".join(lines[7:9]))
        report, _, _ = _import(store, home, path)
        (f,) = report.files
        assert f.status == "imported" and f.resumed_from == len(body)
        assert f.duplicate == 0 and f.imported >= 1
