"""The 1,000 kills (issue 45 item 9): ``kill -9`` the daemon while 20 sessions send hook events
(live and spooled), and ``kill -9`` ``import``, ``watch`` and ``compact`` at random moments;
count what was lost, duplicated or corrupted.

    .venv/bin/python bench/soak.py --kills 1000                  # all four targets, 1,000 each
    .venv/bin/python bench/soak.py --target import --kills 20    # one target
    .venv/bin/python bench/soak.py --kills 50 --workspace /tmp/soak --seed 7

Progress goes to stderr; at the end a table per target: kills, runs that completed before their
kill time, lost, duplicated, integrity failures, other differences, seconds. Exit status 1 when
anything was lost, duplicated or corrupt (or a run failed), else 0.

**Processes.** Each target's worker imports continuity once, then forks every run: each
daemon, ``import``, ``watch`` or ``compact`` (``continuity.cli.app.main`` with its argv) and
each hook client (``continuity.cli.hookcmd.run``, the code of ``continuity hook``) is a real
process of its own, killed with ``SIGKILL`` by pid, without paying Python's start-up per run.
Targets run in parallel (``--jobs``, default 2: the daemon beside the three commands).

**import, watch, compact.** Inputs are real session files (``../shared/data``, else
``tests/fixtures/samples``, and ``examples/sessions``), laid out as the harnesses write them.
A *cycle* starts a fresh workspace (so kills land in migrations too) and grows the files in
``STEPS`` appends of whole lines; after each append the target runs and is killed at a moment
drawn uniformly over the uninterrupted run's measured duration (seeded), then resumed (run
again to completion: ``import``; ``watch --once`` after a killed ``watch``; ``compact``, after
an uninterrupted ``import`` of the append). ``PRAGMA integrity_check`` runs after the kill and
after the resume; then the store is compared with the state an uninterrupted reference run of
the same appends left (computed once per target): each table's rows with their content
digests and no time stamps (sessions, entries, tool calls, runs, sources and source lines, raw
lines, import issues, checkpoints, receipts, transcripts, notes; compactions are entries).
*Lost*: expected rows missing; *duplicated*: rows beyond the expected count (a torn row counts
as one lost and one extra); *other*: the same rows at other positions (seq) or a count of the
search index that differs.

**daemon.** 20 Claude Code sessions send ``session-start``, then prompt and Stop pairs (each
prompt and answer carrying a unique marker) and now and then a ``pre-compaction``, each
through the hook client, whose event id the soak chooses (``spool.new_event_id`` patched in the
client: 32 hex characters as always) so it can be found. The daemon (``serve`` on port 0,
archiving off) is killed at a moment drawn over [0, start-up + ``SERVE_SECONDS``), so kills land
in migrations (each *epoch* of ``EPOCH_KILLS`` kills starts a fresh workspace), the spool's
replay, request handling and commits; it restarts after a random pause during which hooks
spool. An epoch ends with ``session-end`` for every session and a final daemon run that drains
the spool. Then every event the hook client delivered (2xx) or spooled must be in
``applied_events``, each marker exactly once in its session's transcript, each live turn's
event id at most once in the canonical JSONL, nothing left in the spool or rejected.
``PRAGMA integrity_check`` runs after every kill.

With ``--workspace DIR`` the evidence stays there: per target a ``kills.jsonl`` (one line per
kill: step, delay, result) and the workspace of every cycle or epoch that failed; without it a
temporary folder is used and removed unless something failed.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGETS = ("daemon", "import", "watch", "compact")
#: appends of whole lines per cycle (a fresh workspace each cycle)
STEPS = 4
#: kills per daemon epoch (a fresh workspace each epoch)
EPOCH_KILLS = 50
#: hook sessions driven at once
SESSIONS = 20
#: seconds a daemon may serve after start-up before its kill time at the latest
SERVE_SECONDS = 1.5
#: the longest pause (seconds) between a daemon's kill and its restart (hooks spool meanwhile)
DOWN_SECONDS = 0.4
#: a file target's kill moment is drawn over [0, this x a whole run of the step): first the
#: reference runs, then each run that ended before its kill time and each resume after a kill
#: at the very start (the machine's load varies: a window cut short would never reach the
#: run's last commits, one too long wastes runs)
WINDOW_MARGIN = 1.25
#: a session's pause between one hook's end and its next event (seconds, drawn uniformly)
THINK_SECONDS = (0.3, 1.5)
#: ``compact``'s budget (bytes): small, so each append makes a compaction
COMPACT_BUDGET = 2000


def say(message: str) -> None:
    print(f"soak: {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------- forked runs


#: the runs this process forked and has not reaped (ended with it when it is stopped)
CHILDREN: set[int] = set()


def wait(pid: int, flags: int = 0) -> tuple[int, int]:
    """``os.waitpid`` of a forked run, forgetting it once reaped."""
    done, status = os.waitpid(pid, flags)
    if done:
        CHILDREN.discard(done)
    return done, status


def stop_children(_signum: int = 0, _frame: Any = None) -> None:
    """SIGTERM of a worker: end its runs (each in a process group of its own), then itself."""
    for pid in list(CHILDREN):
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
    os._exit(143)


def fork_run(
    body: Callable[[], int],
    log: Path | None,
    stdin_data: bytes | None = None,
    env: dict[str, str] | None = None,
) -> int:
    """Fork a child that runs ``body`` (its return value or ``SystemExit`` code is the exit
    status), its stdout and stderr appended to ``log`` (or /dev/null), its stdin
    ``stdin_data`` (or /dev/null). Returns the child's pid."""
    read_end = None
    if stdin_data is not None:
        read_end, write_end = os.pipe()
        os.write(write_end, stdin_data)  # hook bodies are small: the pipe holds them
        os.close(write_end)
    pid = os.fork()
    if pid:
        if read_end is not None:
            os.close(read_end)
        CHILDREN.add(pid)
        return pid
    code = 1
    try:
        os.setpgid(0, 0)
        out = os.open(log or os.devnull, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.dup2(read_end if read_end is not None else os.open(os.devnull, os.O_RDONLY), 0)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.environ.update(env or {})
        try:
            code = body()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - the status and the log say it
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code if isinstance(code, int) else 1)


def cli_body(argv: list[str]) -> Callable[[], int]:
    def body() -> int:
        from continuity.cli.app import main

        sys.argv = ["continuity", *argv]
        main()
        return 0

    return body


def status_of(wait_status: int) -> int:
    """An exit code, or minus the signal's number for a killed run."""
    return os.waitstatus_to_exitcode(wait_status)


def run_to_end(
    body: Callable[[], int], log: Path, env: dict[str, str], timeout: float = 300.0
) -> tuple[int, float]:
    """Run ``body`` in a child to its end; ``(exit status, seconds)``."""
    started = time.monotonic()
    pid = fork_run(body, log, env=env)
    while True:
        done, status = wait(pid, os.WNOHANG)
        if done:
            return status_of(status), time.monotonic() - started
        if time.monotonic() - started > timeout:
            os.kill(pid, signal.SIGKILL)
            wait(pid)
            return -999, time.monotonic() - started
        time.sleep(0.002)


def run_killed(
    body: Callable[[], int], log: Path, env: dict[str, str], delay: float
) -> tuple[bool, int]:
    """Run ``body`` in a child and ``SIGKILL`` it ``delay`` seconds after the fork:
    ``(killed, status)``; ``killed`` is False when it had ended by then."""
    started = time.monotonic()
    pid = fork_run(body, log, env=env)
    while True:
        done, status = wait(pid, os.WNOHANG)
        if done:
            return False, status_of(status)
        left = started + delay - time.monotonic()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            _, status = wait(pid)
            return status_of(status) == -signal.SIGKILL, status_of(status)
        time.sleep(min(left, 0.002))


# ---------------------------------------------------------------------------- the store


def integrity(db: Path) -> str:
    """``PRAGMA integrity_check`` of the SQLite file (``ok`` when no file exists yet: a kill
    before the store was made)."""
    if not db.exists():
        return "ok"
    conn = sqlite3.connect(db, timeout=30)
    try:
        rows = conn.execute("PRAGMA integrity_check").fetchall()
    except sqlite3.DatabaseError as exc:
        return f"error: {exc}"
    finally:
        conn.close()
    return "; ".join(str(r[0]) for r in rows)


def schema_version(db: Path) -> str | None:
    """The store's Alembic revision (None: no store, or none recorded yet)."""
    if not db.exists():
        return None
    conn = sqlite3.connect(db, timeout=30)
    try:
        row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    except sqlite3.DatabaseError:
        return None
    finally:
        conn.close()
    return row[0] if row else None


def _sha(value: Any) -> str | None:
    if value is None:
        return None
    data = value if isinstance(value, bytes) else str(value).encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:20]


#: table → the SELECT of its rows' identity (no time stamps the run's clock sets, no ids a
#: sequence hands out); each result row is one item of the multiset compared
IDENTITY = {
    "sessions": "SELECT session_key, agent_id, harness, project, source_path, title, started_at,"
    " ended_at, entry_count, forked_from FROM sessions",
    # a compaction's ts is when it was made
    "entries": "SELECT session_key, kind, role, type_name, visible, base_visible, is_request,"
    " sidechain, CASE kind WHEN 'compaction' THEN NULL ELSE ts END, cwd, sha(content),"
    " sha(content_z), sha(meta), p.path, line_no, byte_offset,"
    " raw_sha256, view_bytes FROM entries"
    " LEFT JOIN source_paths p ON p.source_id = entries.source_id",
    "tool_calls": "SELECT session_key, call_id, call_seq, result_seq FROM tool_calls",
    "runs": "SELECT run_id, session_key, agent_id, request_seq, end_seq, status, started_at,"
    " ended_at FROM runs",
    "sources": "SELECT path, session_key, harness, size, offset, line_count, prefix_sha256,"
    " sha(reader_state), gone_at IS NULL, pending_from FROM sources",
    "source_lines": "SELECT p.path, l.line_no, l.byte_offset, l.raw_sha256 FROM source_lines l"
    " JOIN source_paths p ON p.source_id = l.source_id",
    "raw_lines": "SELECT sha256 FROM raw_lines",
    "import_issues": "SELECT path, line_no, byte_offset, byte_length, reason, raw_sha256"
    " FROM import_issues",
    "checkpoints": "SELECT session_key, harness, project, trigger, sha(digest), prompt_count,"
    " sha(memory_queries), sha(recent_remembers) FROM session_checkpoints",
    "receipts": "SELECT session_key, run_id, reason FROM refusal_receipts",
    "transcripts": "SELECT session_key, agent_id, harness, project, content_hash,"
    " completed_at IS NULL FROM session_transcripts",
    "notes": "SELECT session_key, sha(text) FROM notes",
}
#: positions: the same rows at the same places
POSITION = {
    "entries@seq": "SELECT session_key, seq, kind, sha(content), sha(content_z) FROM entries",
    "fts@count": "SELECT count(*) FROM entries_fts_docsize",  # documents indexed
}


def snapshot(db: Path) -> dict[str, Counter]:
    """The store's rows as multisets of their identity (``IDENTITY``, ``POSITION``)."""
    conn = sqlite3.connect(db, timeout=30)
    conn.create_function("sha", 1, _sha, deterministic=True)
    out = {}
    try:
        for name, sql in {**IDENTITY, **POSITION}.items():
            try:
                out[name] = Counter(tuple(r) for r in conn.execute(sql))
            except sqlite3.OperationalError as exc:  # a table this schema does not have
                out[name] = Counter({("missing", str(exc)): 1})
    finally:
        conn.close()
    out["transcript jsonl"] = jsonl_records(db.parent)
    return out


def jsonl_records(home: Path) -> Counter:
    """The canonical transcript files' records (``memory/<harness>/transcripts/``) by what
    they say, not when they were captured: a record written twice is a duplicate too."""
    found: Counter = Counter()
    for path in sorted(home.glob("memory/*/transcripts/transcript.jsonl")):
        for line in path.read_bytes().splitlines():
            try:
                r = json.loads(line)
            except ValueError:
                found[("torn line", path.parent.parent.name, _sha(line))] += 1
                continue
            found[
                (
                    r.get("harness"),
                    r.get("session_key"),
                    r.get("seq"),
                    r.get("role"),
                    r.get("content_sha256"),
                    r.get("source_path"),
                    r.get("source_line"),
                    r.get("event_id"),
                )
            ] += 1
    return found


@dataclass
class Diff:
    lost: int = 0
    duplicated: int = 0
    other: int = 0
    samples: list[str] = field(default_factory=list)


def compare(expected: dict[str, Counter], actual: dict[str, Counter]) -> Diff:
    diff = Diff()
    for name, want in expected.items():
        have = actual.get(name, Counter())
        missing, extra = want - have, have - want
        count_missing, count_extra = sum(missing.values()), sum(extra.values())
        if name in POSITION:
            diff.other += max(count_missing, count_extra)
        else:
            diff.lost += count_missing
            diff.duplicated += count_extra
        for label, rows in (("missing", missing), ("extra", extra)):
            for row in list(rows)[:3]:
                if len(diff.samples) < 12:
                    diff.samples.append(f"{name} {label}: {row!r}"[:400])
    return diff


# ---------------------------------------------------------------------------- results


@dataclass
class Result:
    target: str
    kills: int = 0
    completed: int = 0
    lost: int = 0
    duplicated: int = 0
    integrity_failures: int = 0
    other: int = 0
    failed_runs: int = 0
    seconds: float = 0.0
    notes: dict[str, Any] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (
            self.lost
            or self.duplicated
            or self.integrity_failures
            or self.other
            or self.failed_runs
        )


class Evidence:
    """``kills.jsonl`` of a target and the folders of failed cycles."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.log = open(folder / "kills.jsonl", "a", encoding="utf-8")  # noqa: SIM115 - open while the child runs

    def kill(self, **fields: Any) -> None:
        self.log.write(json.dumps(fields, sort_keys=True) + "\n")
        self.log.flush()


# ---------------------------------------------------------------------------- inputs


def input_files() -> list[tuple[Path, str]]:
    """``(source file, path under the soak's harness root)``: real sessions of each harness,
    laid out as ``watch`` expects (``claude/<project>/``, ``codex/YYYY/MM/DD/``, ``pi/<cwd>/``)."""
    shared = ROOT.parent / "shared" / "data"
    data = shared if shared.is_dir() else ROOT / "tests" / "fixtures" / "samples"
    examples = ROOT / "examples" / "sessions"
    picks = [
        (data / "claude-code" / "tool_heavy.jsonl", "claude/-work-soak/tool_heavy.jsonl"),
        (data / "claude-code" / "short.jsonl", "claude/-work-soak/short.jsonl"),
        (
            data / "claude-code" / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
            "claude/-work-soak/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
        ),
        (
            data / "codex" / "with-compaction.jsonl",
            "codex/2026/12/02/rollout-2026-12-02T05-00-00-with-compaction.jsonl",
        ),
        (
            data / "pi" / "v3-short-session.jsonl",
            "pi/--work-soak--/2026-12-02T05-00-00-000Z_v3-short-session.jsonl",
        ),
    ]
    for path in sorted(examples.glob("*/*.jsonl")):
        harness = path.parent.name
        where = {
            "claude-code": "claude/-work-examples",
            "codex": "codex/2026/12/02",
            "pi": "pi/--work-examples--",
        }[harness]
        picks.append((path, f"{where}/{path.name}"))
    return [(src, rel) for src, rel in picks if src.is_file()]


class Inputs:
    """The files, split into ``STEPS`` appends of whole lines, written under ``root``."""

    def __init__(self, root: Path, steps: int = STEPS) -> None:
        self.root = root
        self.steps = steps
        self.files = []
        for src, rel in input_files():
            lines = src.read_bytes().splitlines(keepends=True)
            if lines and not lines[-1].endswith(b"\n"):
                lines[-1] += b"\n"
            cuts = [round(len(lines) * k / steps) for k in range(steps + 1)]
            self.files.append((rel, [b"".join(lines[cuts[k] : cuts[k + 1]]) for k in range(steps)]))

    def reset(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        for rel, _ in self.files:
            (self.root / rel).parent.mkdir(parents=True, exist_ok=True)

    def append(self, step: int) -> None:
        for rel, chunks in self.files:
            with open(self.root / rel, "ab") as fh:
                fh.write(chunks[step])

    def paths(self) -> list[str]:
        return [str(self.root / rel) for rel, _ in self.files]


# ---------------------------------------------------------------------------- file targets


class FileTarget:
    """``import``, ``watch`` or ``compact`` killed after each append (module docstring)."""

    def __init__(self, name: str, folder: Path, rng: random.Random, race: bool = False) -> None:
        self.name = name
        self.race = race and name in ("import", "watch")
        self.folder = folder
        self.rng = rng
        self.inputs = Inputs(folder / "sources")
        self.compact_key: str | None = None
        self.head: str | None = None

    def home(self, cycle: str) -> Path:
        return self.folder / cycle

    def make_home(self, cycle: str) -> Path:
        home = self.home(cycle)
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        root = self.inputs.root
        (home / "config.toml").write_text(
            "[archive]\n"
            f'claude_code = "{root / "claude"}"\ncodex = "{root / "codex"}"\n'
            f'pi = "{root / "pi"}"\nopencode = ""\nrescan_seconds = 3600\n',
            encoding="utf-8",
        )
        return home

    def env(self, home: Path) -> dict[str, str]:
        return {
            "CONTINUITY_HOME": str(home),
            "CONTINUITY_NO_HOOKS": "1",
            "NO_COLOR": "1",
            "COLUMNS": "200",
        }

    def argv(self, home: Path, *, killed: bool) -> list[str]:
        """The command killed (``killed``) or run to completion (the resume and reference)."""
        if self.name == "import":
            return ["import", *self.inputs.paths(), "--home", str(home)]
        if self.name == "watch":
            return (
                ["watch", "--home", str(home)]
                if killed
                else ["watch", "--once", "--home", str(home)]
            )
        assert self.compact_key
        return ["compact", self.compact_key, "--budget", str(COMPACT_BUDGET), "--home", str(home)]

    def resume(self, home: Path, log: Path) -> tuple[int, float]:
        """Run the step to completion after its kill; with ``race`` (``--race``), ``import``
        and ``watch --once`` of the same files at once (the daemon's archiver beside a user's
        import): the worse exit status, the longer time."""
        if not self.race:
            return run_to_end(cli_body(self.argv(home, killed=False)), log, self.env(home))
        started = time.monotonic()
        pids = [
            fork_run(cli_body(argv), log, env=self.env(home))
            for argv in (
                ["import", *self.inputs.paths(), "--home", str(home)],
                ["watch", "--once", "--home", str(home)],
            )
        ]
        codes = [status_of(wait(pid)[1]) for pid in pids]
        return max(codes, key=abs), time.monotonic() - started

    def before(self, home: Path, log: Path) -> None:
        """What runs uninterrupted before the killed run of a step (``compact``: the import
        of the append)."""
        if self.name == "compact":
            paths = [p for p in self.inputs.paths() if "tool_heavy" in p]  # the one compacted
            code, _ = run_to_end(
                cli_body(["import", *paths, "--home", str(home)]), log, self.env(home)
            )
            if code != 0:
                raise RuntimeError(f"compact's import failed ({code}); see {log}")

    def reference(self) -> tuple[list[dict[str, Counter]], list[float]]:
        """The store after each step of an uninterrupted cycle, and each step's seconds (run
        twice: a row that differs between two uninterrupted runs would make the comparison
        meaningless, so it stops the soak)."""
        states: list[list[dict[str, Counter]]] = []
        seconds: list[float] = []
        for attempt in range(2):
            home = self.make_home(f"reference-{attempt}")
            log = home / "runs.log"
            self.inputs.reset()
            run_states = []
            for step in range(self.inputs.steps):
                self.inputs.append(step)
                self.before(home, log)
                if self.name == "compact" and self.compact_key is None:
                    self.compact_key = session_key_of(home / "continuity.db", "tool_heavy")
                code, took = run_to_end(
                    cli_body(self.argv(home, killed=False)), log, self.env(home)
                )
                if code not in (0, 3):  # compact: 3 = refused, a receipt (compared too)
                    raise RuntimeError(f"{self.name} reference run failed ({code}); see {log}")
                if attempt == 0:
                    seconds.append(took)
                else:  # their mean, with a margin: kills reach the run's end too
                    seconds[step] = (seconds[step] + took) / 2 * WINDOW_MARGIN
                run_states.append(snapshot(home / "continuity.db"))
                self.head = schema_version(home / "continuity.db")
            states.append(run_states)
        for step, (one, two) in enumerate(zip(*states, strict=False)):
            diff = compare(one, two)
            if diff.lost or diff.duplicated or diff.other:
                raise RuntimeError(
                    f"{self.name}: two uninterrupted runs differ at step {step}: "
                    + "; ".join(diff.samples)
                )
        for attempt in range(2):
            shutil.rmtree(self.home(f"reference-{attempt}"), ignore_errors=True)
        return states[0], seconds

    def run(self, kills: int, evidence: Evidence) -> Result:
        result = Result(self.name)
        started = time.monotonic()
        expected, seconds = self.reference()
        result.notes["kills by phase"] = Counter()
        result.notes["first kill window per step (s)"] = [round(s, 3) for s in seconds]
        say(
            f"{self.name}: reference run {sum(seconds):.2f} s for {len(seconds)} steps "
            f"({', '.join(f'{s:.2f}' for s in seconds)})"
        )
        cycle = 0
        while result.kills < kills:
            cycle += 1
            name = f"cycle-{cycle:04d}"
            home = self.make_home(name)
            log = home / "runs.log"
            db = home / "continuity.db"
            self.inputs.reset()
            failed = False
            for step in range(self.inputs.steps):
                if result.kills >= kills:
                    break
                self.inputs.append(step)
                self.before(home, log)
                window = seconds[step]
                delay = self.rng.uniform(0, window)
                run_started = time.monotonic()
                killed, status = run_killed(
                    cli_body(self.argv(home, killed=True)), log, self.env(home), delay
                )
                if not killed:  # a whole run's length: the window follows the machine's load
                    seconds[step] = adapt(window, time.monotonic() - run_started)
                if killed:
                    result.kills += 1
                    # where the kill landed, as the store tells it: before the store existed,
                    # while it was being migrated, or in the work itself
                    version = schema_version(db)
                    phase = (
                        "no store yet"
                        if not db.exists()
                        else "migrations"
                        if version != self.head
                        else "work"
                    )
                    result.notes["kills by phase"][phase] += 1
                else:
                    result.completed += 1
                after_kill = integrity(db)
                code, took = self.resume(home, log)
                if killed and delay < 0.1 * window and self.name != "watch":
                    seconds[step] = adapt(window, took)  # killed at once: the resume is whole
                after_resume = integrity(db)
                record = {
                    "cycle": cycle,
                    "step": step,
                    "delay": round(delay, 4),
                    "killed": killed,
                    "status": status,
                    "resume": code,
                    "phase": phase if killed else None,
                    "integrity_after_kill": after_kill,
                    "integrity_after_resume": after_resume,
                }
                problems = []
                if after_kill != "ok" or after_resume != "ok":
                    result.integrity_failures += 1
                    problems.append(f"integrity: {after_kill} / {after_resume}")
                if code not in (0, 3) or (not killed and status not in (0, 3)):
                    result.failed_runs += 1
                    problems.append(f"run failed: killed run {status}, resume {code}")
                if db.exists():
                    diff = compare(expected[step], snapshot(db))
                    result.lost += diff.lost
                    result.duplicated += diff.duplicated
                    result.other += diff.other
                    record.update(lost=diff.lost, duplicated=diff.duplicated, other=diff.other)
                    if diff.lost or diff.duplicated or diff.other:
                        problems.append("; ".join(diff.samples))
                else:
                    result.lost += 1
                    problems.append("no store after the resume")
                evidence.kill(**record, problems=problems)
                if problems:
                    failed = True
                    result.failures.append(
                        f"{name} step {step} (delay {delay:.3f} s): " + " | ".join(problems)[:600]
                    )
                    break  # later steps of this cycle would repeat the difference
            if failed:
                shutil.copytree(home, evidence.folder / f"failed-{name}", dirs_exist_ok=True)
                shutil.copytree(
                    self.inputs.root,
                    evidence.folder / f"failed-{name}" / "sources",
                    dirs_exist_ok=True,
                )
            if not os.environ.get("SOAK_DEBUG"):
                shutil.rmtree(home, ignore_errors=True)
            if cycle % 10 == 0 or result.kills >= kills:
                took = time.monotonic() - started
                say(
                    f"{self.name}: {result.kills}/{kills} kills, {result.completed} completed, "
                    f"lost {result.lost}, duplicated {result.duplicated}, integrity "
                    f"{result.integrity_failures}, other {result.other}, {took:.0f} s "
                    f"({took / max(result.kills, 1):.2f} s per kill)"
                )
        result.seconds = time.monotonic() - started
        result.notes["kills by phase"] = dict(result.notes["kills by phase"])
        return result


def adapt(window: float, whole: float) -> float:
    """The next kill window of a step after an uninterrupted run of it took ``whole``
    seconds: halfway to ``WINDOW_MARGIN`` x that."""
    return (window + WINDOW_MARGIN * whole) / 2


def session_key_of(db: Path, stem: str) -> str:
    conn = sqlite3.connect(db)
    try:
        row = conn.execute(
            "SELECT session_key FROM sessions WHERE source_path LIKE ?", (f"%{stem}%",)
        ).fetchone()
    finally:
        conn.close()
    if row is None:
        raise RuntimeError(f"no session imported from {stem}")
    return row[0]


# ---------------------------------------------------------------------------- the daemon


@dataclass
class Event:
    event_id: str
    session: int
    kind: str  # our event name
    marker: str | None  # the text that must be in the transcript once
    outcome: str = "pending"  # delivered | spooled | dropped:<why>


class HookSession:
    """One Claude Code session's events: start, prompt/answer pairs (a pre-compaction every
    fifth turn), and an end when asked."""

    def __init__(self, epoch: int, number: int) -> None:
        self.epoch = epoch
        self.number = number
        self.key = f"50a4{epoch:04x}-0000-4000-8000-{number:012x}"
        self.sent = 0
        self.turn = 0
        self.pid: int | None = None
        self.event: Event | None = None
        self.next_at = 0.0
        self.ended = False

    def next_event(self, end: bool) -> tuple[Event, bytes]:
        self.sent += 1
        event_id = f"{self.epoch:08x}{self.number:08x}{self.sent:016x}"
        base = {
            "session_id": self.key,
            "cwd": f"/work/soak/project-{self.number % 4}",
            "transcript_path": None,
        }
        marker = None
        if end:
            kind, body = "session-end", {"hook_event_name": "SessionEnd", "reason": "other"}
            self.ended = True
        elif self.sent == 1:
            kind, body = "session-start", {"hook_event_name": "SessionStart", "source": "startup"}
        elif self.sent % 2 == 0:
            self.turn += 1
            marker = f"soakmark-{event_id}-prompt"
            kind, body = (
                "user-prompt-submit",
                {
                    "hook_event_name": "UserPromptSubmit",
                    "prompt": f"turn {self.turn} of session {self.number}: please do {marker}",
                },
            )
        elif self.turn % 5 == 0 and self.sent % 4 == 1:
            kind, body = "pre-compaction", {"hook_event_name": "PreCompact", "trigger": "auto"}
        else:
            marker = f"soakmark-{event_id}-answer"
            kind, body = (
                "stop",
                {
                    "hook_event_name": "Stop",
                    "stop_hook_active": False,
                    "last_assistant_message": f"Done with turn {self.turn}: {marker}.",
                },
            )
        base.pop("transcript_path")
        return Event(event_id, self.number, kind, marker), json.dumps({**base, **body}).encode()


def hook_body(home: str, kind: str, event_id: str) -> Callable[[], int]:
    """The hook client, as ``continuity hook KIND --harness claude-code`` runs it, its event
    id ``event_id``."""

    def body() -> int:
        from continuity.cli import hookcmd
        from continuity.daemon.hooks import spool

        spool.new_event_id = lambda: event_id  # the one change: a known id
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # the answer; stderr says what happened
        return hookcmd.run([kind, "--harness", "claude-code", "--home", home], backstop=True)

    return body


def hook_server() -> int:
    """``soak.py --hook-server``: a small process that imports only what ``continuity hook``
    imports and forks one hook client per request line (``{"id", "kind", "home", "err",
    "payload"}``, the payload base64), answering ``<id> <status>`` when the client exits (a
    fork of the worker, which holds the daemon and the embedding model, costs far more)."""
    import base64
    import select

    from continuity.cli import hookcmd  # noqa: F401 - imported once, before the forks
    from continuity.daemon.hooks import spool  # noqa: F401

    children: dict[int, str] = {}
    buffer, reading = b"", True
    while reading or children:
        ready, _, _ = select.select([0] if reading else [], [], [], 0.003)
        if ready:
            data = os.read(0, 1 << 16)
            reading = bool(data)
            buffer += data
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                req = json.loads(line)
                pid = fork_run(
                    hook_body(req["home"], req["kind"], req["id"]),
                    Path(req["err"]),
                    base64.b64decode(req["payload"]),
                )
                children[pid] = req["id"]
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if not pid:
                break
            CHILDREN.discard(pid)
            os.write(1, f"{children.pop(pid)} {status_of(status)}\n".encode())
    return 0


class HookClients:
    """The worker's side of ``hook_server``."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--hook-server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=ROOT,
        )
        assert self.proc.stdout is not None
        self.out = self.proc.stdout.fileno()
        os.set_blocking(self.out, False)
        self.buffer = b""

    def send(self, home: Path, event: Event, payload: bytes, err: Path) -> None:
        import base64

        assert self.proc.stdin is not None
        line = json.dumps(
            {
                "id": event.event_id,
                "kind": event.kind,
                "home": str(home),
                "err": str(err),
                "payload": base64.b64encode(payload).decode(),
            }
        )
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def finished(self) -> list[str]:
        """The ids of the hook clients that ended since the last call."""
        try:
            data = os.read(self.out, 1 << 16)
        except BlockingIOError:
            return []
        if not data:
            raise RuntimeError("the hook server ended")
        self.buffer += data
        *lines, self.buffer = self.buffer.split(b"\n")
        return [line.split()[0].decode() for line in lines if line]

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(60)


def daemon_body(home: Path) -> Callable[[], int]:
    def body() -> int:
        import logging

        from continuity.daemon.server import serve

        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
        serve(home, host="127.0.0.1", port=0)
        return 0

    return body


class DaemonTarget:
    """The daemon killed while 20 sessions send hook events (module docstring)."""

    def __init__(self, folder: Path, rng: random.Random) -> None:
        self.folder = folder
        self.rng = rng

    def make_home(self, name: str) -> Path:
        home = self.folder / name
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        (home / "config.toml").write_text(
            "[archive]\nenabled = false\n[daemon]\nconsolidate_on_end = false\n"
            'log_level = "warning"\n',
            encoding="utf-8",
        )
        return home

    def calibrate(self) -> float:
        """Seconds from fork to ``daemon.url`` of a daemon on a fresh workspace (migrations
        included)."""
        home = self.make_home("calibrate")
        times = []
        for _ in range(2):
            started = time.monotonic()
            pid = fork_run(daemon_body(home), home / "daemon.log")
            while not (home / "daemon.url").exists():
                if wait(pid, os.WNOHANG)[0]:
                    raise RuntimeError(f"the daemon did not start; see {home / 'daemon.log'}")
                if time.monotonic() - started > 120:
                    raise RuntimeError("the daemon did not start in 120 s")
                time.sleep(0.005)
            times.append(time.monotonic() - started)
            os.kill(pid, signal.SIGTERM)
            wait(pid)
        shutil.rmtree(home, ignore_errors=True)
        return max(times)

    def run(self, kills: int, evidence: Evidence) -> Result:
        result = Result("daemon")
        started = time.monotonic()
        ready = self.calibrate()
        window = ready + SERVE_SECONDS
        say(
            f"daemon: start-up (fresh workspace) {ready:.2f} s; kills drawn over "
            f"[0, {window:.2f}) s"
        )
        self.hooks = HookClients()
        result.notes.update(
            startup_seconds=round(ready, 3), events=Counter(), **{"kills by phase": Counter()}
        )
        epoch = 0
        while result.kills < kills:
            epoch += 1
            goal = min(EPOCH_KILLS, kills - result.kills)
            self.epoch(epoch, goal, window, result, evidence)
            took = time.monotonic() - started
            say(
                f"daemon: {result.kills}/{kills} kills, {result.completed} completed, lost "
                f"{result.lost}, duplicated {result.duplicated}, integrity "
                f"{result.integrity_failures}, {took:.0f} s "
                f"({took / max(result.kills, 1):.2f} s per kill); events "
                f"{dict(result.notes['events'])}"
            )
        self.hooks.close()
        result.seconds = time.monotonic() - started
        for key in ("events", "kills by phase"):
            result.notes[key] = dict(result.notes[key])
        return result

    def epoch(
        self, number: int, goal: int, window: float, result: Result, evidence: Evidence
    ) -> None:
        name = f"epoch-{number:04d}"
        home = self.make_home(name)
        db = home / "continuity.db"
        log = home / "daemon.log"
        hooks_log = home / "hooks"
        hooks_log.mkdir()
        sessions = [HookSession(number, n) for n in range(SESSIONS)]
        events: list[Event] = []
        by_id: dict[str, HookSession] = {}
        daemon: int | None = None
        kill_at = restart_at = 0.0
        killed = 0
        ending = False
        problems: list[str] = []

        def reap() -> None:
            nonlocal daemon
            if daemon is not None:
                pid, status = wait(daemon, os.WNOHANG)
                if pid:
                    daemon = None
                    result.failed_runs += 1
                    problems.append(f"the daemon exited by itself ({status_of(status)}); see {log}")
            for event_id in self.hooks.finished():
                session = by_id.pop(event_id, None)
                if session is None or session.event is None:
                    continue
                session.event.outcome = hook_outcome(hooks_log / f"{session.event.event_id}.err")
                result.notes["events"][session.event.outcome.split(":")[0]] += 1
                session.pid, session.event = None, None
                session.next_at = time.monotonic() + self.rng.uniform(*THINK_SECONDS)

        def send(session: HookSession, end: bool) -> None:
            event, payload = session.next_event(end)
            events.append(event)
            self.hooks.send(home, event, payload, hooks_log / f"{event.event_id}.err")
            session.pid, session.event = 1, event
            by_id[event.event_id] = session

        ready_est = window - SERVE_SECONDS
        started_at = 0.0
        serving_kill = False
        while True:
            now = time.monotonic()
            reap()
            if daemon is None and not ending and now >= restart_at:
                started_wall = time.time()
                daemon = fork_run(daemon_body(home), log)
                started_at = time.monotonic()
                # half the kills land in start-up (migrations, reconcile, the spool's
                # replay): a moment over [0, the last start-up's length); the others once it
                # serves (hooks live, their commits): a moment over [ready, ready + SERVE)
                serving_kill = self.rng.random() < 0.5
                kill_at = started_at + (
                    self.rng.uniform(0, SERVE_SECONDS)
                    if serving_kill
                    else self.rng.uniform(0, ready_est)
                )
                ready_at = None
            if daemon is not None and ready_at is None and written_since(home, started_wall):
                ready_at = now
                ready_est = ready_at - started_at
                if serving_kill:
                    kill_at += ready_est
            if daemon is not None and now >= kill_at and (ready_at or not serving_kill):
                os.kill(daemon, signal.SIGKILL)
                _, status = wait(daemon)
                daemon = None
                if status_of(status) == -signal.SIGKILL:
                    killed += 1
                    result.kills += 1
                else:
                    result.completed += 1
                check = integrity(db)
                phase = "serving" if ready_at else "start-up"
                result.notes["kills by phase"][phase] += 1
                evidence.kill(
                    epoch=number,
                    kill=killed,
                    seconds=round(now - started_at, 4),
                    phase=phase,
                    integrity=check,
                    ready=ready_at and round(ready_at - started_at, 4),
                )
                if check != "ok":
                    result.integrity_failures += 1
                    problems.append(f"integrity after kill {killed}: {check}")
                restart_at = time.monotonic() + self.rng.uniform(0, DOWN_SECONDS)
                if killed >= goal:
                    ending = True
            elif daemon is not None and serving_kill and ready_at is None and now - started_at > 60:
                problems.append("a daemon did not get ready in 60 s")
                result.failed_runs += 1
                kill_at, serving_kill = now, False
            for session in sessions:
                if (
                    session.pid is None
                    and not session.ended
                    and now >= session.next_at
                    and not ending
                ):
                    send(session, end=False)
            if ending and not by_id:
                break
            time.sleep(0.003)
        for session in sessions:  # the ends, spooled while no daemon runs
            send(session, end=True)
        while by_id:
            reap()
            time.sleep(0.003)
        self.drain(home, log, events, problems, result)
        self.verify(home, db, events, problems, result)
        if problems:
            result.failures.append(f"{name}: " + " | ".join(problems)[:1500])
            shutil.copytree(home, evidence.folder / f"failed-{name}", dirs_exist_ok=True)
        if not os.environ.get("SOAK_DEBUG"):
            shutil.rmtree(home, ignore_errors=True)

    def drain(
        self, home: Path, log: Path, events: list[Event], problems: list[str], result: Result
    ) -> None:
        """A last daemon run, uninterrupted: it replays the spool; stopped with SIGTERM once
        every taken event is applied (or 60 s passed)."""
        from continuity.daemon.hooks import spool

        wanted = {e.event_id for e in events if e.outcome in ("delivered", "spooled")}
        started_wall = time.time()
        pid = fork_run(daemon_body(home), log)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if wait(pid, os.WNOHANG)[0]:
                result.failed_runs += 1
                problems.append("the final daemon run exited by itself")
                return
            if (
                written_since(home, started_wall)
                and not spool.pending(home)
                and not wanted - applied(home / "continuity.db", wanted)
            ):
                break
            time.sleep(0.05)
        time.sleep(0.2)
        os.kill(pid, signal.SIGTERM)
        _, status = wait(pid)
        if status_of(status) != 0:
            result.failed_runs += 1
            problems.append(f"the final daemon run ended with {status_of(status)}")

    def verify(
        self, home: Path, db: Path, events: list[Event], problems: list[str], result: Result
    ) -> None:
        from continuity.daemon.hooks import spool
        from continuity.store import open_store
        from continuity.transcripts.transcript_log import TranscriptLog, transcript_path

        check = integrity(db)
        if check != "ok":
            result.integrity_failures += 1
            problems.append(f"integrity after the final run: {check}")
        taken = [e for e in events if e.outcome in ("delivered", "spooled")]
        dropped = [e for e in events if e.outcome not in ("delivered", "spooled")]
        if dropped:
            problems.append(
                f"{len(dropped)} event(s) neither delivered nor spooled by the hook: "
                + ", ".join(f"{e.event_id} {e.outcome}" for e in dropped[:5])
            )
            result.failed_runs += len(dropped)
        ids = applied(db, {e.event_id for e in events})
        with open_store(f"sqlite:///{db}") as store:
            session_keys = sorted(
                {HookSession(int(e.event_id[:8], 16), e.session).key for e in events}
            )
            rows = store.get_transcripts(session_keys, "default")
        contents = {k: (rows[k].content if k in rows else "") for k in session_keys}
        live = Counter(
            r.event_id for r in TranscriptLog(transcript_path(home, "claude-code")).live_events()
        )
        lost = duplicated = 0
        for event in taken:
            key = HookSession(int(event.event_id[:8], 16), event.session).key
            missing = event.event_id not in ids
            count = contents[key].count(event.marker) if event.marker else None
            if missing or count == 0:
                lost += 1
                if len(problems) < 20:
                    problems.append(
                        f"lost {event.kind} {event.event_id} ({event.outcome}): "
                        f"applied {not missing}, in the transcript {count}"
                    )
            elif count is not None and count > 1:
                duplicated += 1
                if len(problems) < 20:
                    problems.append(f"duplicated {event.kind} {event.event_id}: {count} times")
        for event_id, count in live.items():
            if count > 1:
                duplicated += 1
                problems.append(f"event {event_id} recorded {count} times in the JSONL")
        if spool.pending(home):
            problems.append("events left in the spool after the final run")
            result.lost += 1
        rejected = home / spool.SPOOL_DIR / spool.REJECTED_FILE
        if rejected.exists() and rejected.stat().st_size:
            problems.append(f"rejected events: {rejected.read_text()[:300]}")
            result.lost += 1
        result.lost += lost
        result.duplicated += duplicated
        result.notes["events checked"] = result.notes.get("events checked", 0) + len(taken)


def written_since(home: Path, wall: float) -> bool:
    """True when the daemon started at ``wall`` (``time.time()``) wrote ``daemon.url`` (a
    killed daemon leaves its own behind, as a real kill does: hooks find it stale)."""
    try:
        return (home / "daemon.url").stat().st_mtime >= wall - 0.01
    except FileNotFoundError:
        return False


def hook_outcome(err: Path) -> str:
    try:
        text = err.read_text(errors="replace")
    except FileNotFoundError:
        return "delivered"
    if "spooled for replay" in text:
        outcome = "spooled"
    elif "refused" in text:
        outcome = "dropped:refused"
    elif "deadline" in text:
        outcome = "dropped:deadline"
    elif "spool failed" in text:
        outcome = "dropped:spool-failed"
    elif text.strip():
        outcome = "dropped:" + text.strip().splitlines()[-1][:80]
    else:
        outcome = "delivered"
    if outcome == "spooled" or outcome == "delivered":
        if os.environ.get("SOAK_DEBUG"):
            print(text.strip(), file=sys.stderr)
        err.unlink(missing_ok=True)
    return outcome


def applied(db: Path, ids: set[str]) -> set[str]:
    if not db.exists() or not ids:
        return set()
    conn = sqlite3.connect(db, timeout=30)
    try:
        found = set()
        items = sorted(ids)
        for start in range(0, len(items), 500):
            part = items[start : start + 500]
            found.update(
                r[0]
                for r in conn.execute(
                    f"SELECT event_id FROM applied_events WHERE event_id IN "
                    f"({','.join('?' * len(part))})",
                    part,
                )
            )
        return found
    except sqlite3.OperationalError:  # no table yet
        return set()
    finally:
        conn.close()


# ---------------------------------------------------------------------------- driver


def preload() -> None:
    """Import every module of continuity (and what the commands import as they run), and
    load the embedding model when the semantic extra is there, once, before forking: each run
    then costs its work, not Python's imports (a fresh ``import`` spends ~3 s importing)."""
    import importlib
    import pkgutil

    import continuity

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # no pool threads before a fork
    for info in pkgutil.walk_packages(continuity.__path__, "continuity.", onerror=lambda _: None):
        if ".migrations." in info.name or info.name.endswith("__main__"):
            continue
        with contextlib.suppress(Exception):  # an optional extra's module: the run imports it
            importlib.import_module(info.name)
    for name in ("fastapi", "uvicorn", "watchfiles", "alembic", "alembic.command"):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    try:
        from continuity.retrieval.embedder import load_embedder
        from continuity.retrieval.settings import RetrievalSettings

        load_embedder(RetrievalSettings())
    except Exception:  # noqa: BLE001 - no model here: runs go without it as they would
        pass


def run_target(target: str, kills: int, seed: int, folder: Path, race: bool = False) -> Result:
    """One target's whole soak in this process."""
    signal.signal(signal.SIGTERM, stop_children)
    preload()
    import gc

    gc.collect()
    gc.freeze()  # the forked runs' collections do not touch (and copy) the preloaded objects
    rng = random.Random(f"{seed}:{target}")
    evidence = Evidence(folder)
    if target == "daemon":
        return DaemonTarget(folder, rng).run(kills, evidence)
    return FileTarget(target, folder, rng, race).run(kills, evidence)


def table(results: list[Result]) -> str:
    head = (
        "target",
        "kills",
        "completed",
        "lost",
        "duplicated",
        "integrity failures",
        "other",
        "failed runs",
        "seconds",
    )
    rows = [head] + [
        (
            r.target,
            r.kills,
            r.completed,
            r.lost,
            r.duplicated,
            r.integrity_failures,
            r.other,
            r.failed_runs,
            f"{r.seconds:.0f}",
        )
        for r in results
    ]
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(head))]
    lines = [
        "| "
        + " | ".join(
            str(c).rjust(w) if i else str(c).ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )
        + " |"
        for row in rows
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--target",
        choices=TARGETS,
        action="append",
        help="a target (repeatable; default: all four)",
    )
    parser.add_argument("--kills", type=int, default=1000, help="kills per target (1000)")
    parser.add_argument("--seed", type=int, default=45, help="the random seed (45)")
    parser.add_argument("--workspace", type=Path, help="keep the evidence in this folder")
    parser.add_argument("--jobs", type=int, default=2, help="targets run at once (2)")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    parser.add_argument(
        "--race",
        action="store_true",
        help="import and watch: resume with import and watch --once at once "
        "(two importers of the same files; not part of the 1,000 kills)",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--hook-server", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    for name in [n for n in os.environ if n.startswith("CONTINUITY_")]:
        del os.environ[name]  # each run names its own workspace; nothing else may leak in
    if args.hook_server:
        signal.signal(signal.SIGTERM, stop_children)
        return hook_server()
    if args.kills < 1:
        parser.error("--kills must be at least 1")
    if args.worker:  # one target, in a process of its own: its result as JSON on stdout
        target, folder = args.worker.split(":", 1)
        try:
            result = run_target(target, args.kills, args.seed, Path(folder), args.race)
        except Exception as exc:  # noqa: BLE001 - reported in the table, with its traceback
            traceback.print_exc()
            result = Result(target, failed_runs=1, failures=[f"{type(exc).__name__}: {exc}"])
        print(json.dumps(asdict(result)), flush=True)
        return 0
    targets = args.target or list(TARGETS)
    temp = args.workspace is None
    workspace = Path(tempfile.mkdtemp(prefix="continuity-soak-")) if temp else args.workspace
    workspace.mkdir(parents=True, exist_ok=True)
    say(
        f"{', '.join(targets)}: {args.kills} kills each, seed {args.seed}, workspace "
        f"{workspace}, {args.jobs} at once"
    )
    results = run_all(targets, args, workspace)
    print(table(results))
    for r in results:
        for key, value in r.notes.items():
            print(f"{r.target}: {key}: {value}")
        for failure in r.failures[:10]:
            print(f"{r.target}: FAILED {failure}")
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=1))
    clean = all(r.clean for r in results) and len(results) == len(targets)
    if temp and clean:
        shutil.rmtree(workspace, ignore_errors=True)
    elif not clean:
        print(f"evidence: {workspace}")
    return 0 if clean else 1


def run_all(targets: list[str], args: argparse.Namespace, workspace: Path) -> list[Result]:
    """Each target in a worker process of its own, ``args.jobs`` at once, the daemon first
    (the longest)."""
    queue = sorted(targets, key=lambda t: t != "daemon")
    running: dict[str, subprocess.Popen] = {}
    results: dict[str, Result] = {}
    signal.signal(signal.SIGTERM, interrupted)
    try:
        drive(queue, running, results, args, workspace)
    finally:
        for proc in running.values():  # stopped early: the workers end their runs
            proc.terminate()
            proc.wait(30)
    return [results[t] for t in targets if t in results]


def interrupted(_signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt


def drive(
    queue: list[str],
    running: dict[str, subprocess.Popen],
    results: dict[str, Result],
    args: argparse.Namespace,
    workspace: Path,
) -> None:
    while queue or running:
        while queue and len(running) < max(1, args.jobs):
            target = queue.pop(0)
            running[target] = subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    "--worker",
                    f"{target}:{workspace / target}",
                    "--kills",
                    str(args.kills),
                    "--seed",
                    str(args.seed),
                    *(["--race"] if args.race else []),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                text=True,
                cwd=ROOT,
            )
        for target, proc in list(running.items()):
            if proc.poll() is None:
                continue
            out = proc.stdout.read() if proc.stdout else ""
            del running[target]
            try:
                data = json.loads(out.strip().splitlines()[-1])
                results[target] = Result(**data)
            except (ValueError, IndexError, TypeError):
                results[target] = Result(
                    target, failed_runs=1, failures=[f"worker ended with {proc.returncode}"]
                )
        time.sleep(0.1)


if __name__ == "__main__":
    sys.exit(main())
