"""Benchmark of team sync (issue 41 item 5, first figures): push throughput against a local
import of the same sessions, in the same run, and team search latency.

Run from the project root:

    .venv/bin/python bench/team.py --database-url postgresql+psycopg://postgres@127.0.0.1:5432/postgres
    .venv/bin/python bench/team.py --quick ...   # 4 MB corpus

``--database-url`` (or ``$CONTINUITY_BENCH_DATABASE_URL``) names a server the benchmark may
connect to as a role that creates databases and roles; it creates a database
(``continuity_bench_team_*``), a member role and a login role of its own there and drops them
at the end.

1. **Import.** One corpus (``--mb``, default 20 MB of 1 MB session files, half Claude Code,
   half pi, generated from the real samples with fresh ids: ``bench/scale.py``) is imported
   with ``continuity import DIR --home H --json`` in a child process: wall time, MB/s
   (1 MB = 10^6 bytes of session files).
2. **Push.** Every project of the workspace is shared and ``continuity sync --json`` runs in a
   child process against the fresh team store, as the member role: wall time, MB/s of the
   same session files, rows pushed, and the ratio of the push's time to the import's (the
   same-run ratio the issue asks for). A second ``sync`` (nothing new) shows the cost of a
   sync with nothing to push.
3. **Team search.** ``--queries`` searches (words drawn from the pushed rows) through
   ``TeamStore.search`` as the member: median and p99 in ms.
4. **The daemon's sync lag.** ``continuity serve`` of the same workspace (its settings as
   shipped: debounce 2 s, floor 30 s; archiving off), then ``--lag-sessions`` Claude Code
   sessions of a shared repository, each captured through the real hook command (start, a
   prompt, the answer, stop, end): the seconds from the end hook's return until the
   session's rows are in the team store, median and worst; nobody runs ``sync``.

Not measured yet (issue 41 item 5): 10 members x 100k rows.
Figures also go to ``bench/results/team.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

import scale  # noqa: E402  (corpus, the command in a child process)
from sqlalchemy import create_engine, text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

MB = 1_000_000


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark (module docstring); 0 on success."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--database-url", default=os.environ.get("CONTINUITY_BENCH_DATABASE_URL"))
    ap.add_argument("--mb", type=int, default=20)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--lag-sessions", type=int, default=5)
    args = ap.parse_args(argv)
    if not args.database_url:
        ap.error("give --database-url (or $CONTINUITY_BENCH_DATABASE_URL)")
    mb = 4 if args.quick else args.mb
    base = make_url(args.database_url)
    if base.drivername in ("postgresql", "postgres"):
        base = base.set(drivername="postgresql+psycopg")
    tag = uuid.uuid4().hex[:8]
    db, member, group = f"continuity_bench_team_{tag}", f"bench_ana_{tag}", f"bench_cm_{tag}"
    server = create_engine(base, isolation_level="AUTOCOMMIT")
    tmp = Path(tempfile.mkdtemp(prefix="continuity-bench-team-"))
    with server.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{db}"'))
        conn.execute(text(f'CREATE ROLE "{member}" LOGIN'))
    try:
        from continuity.store import open_store
        from continuity.team.identity import project_identity
        from continuity.team.remote import TeamStore
        from continuity.team.schema import add_member, init_team_store
        from continuity.team.settings import write_team

        owner_url = base.set(database=db)
        member_url = owner_url.set(username=member).render_as_string(hide_password=False)
        engine = create_engine(owner_url)
        init_team_store(engine, member_role=group)
        add_member(engine, member, "bench")
        _log(f"corpus: {mb} MB")
        files = scale.build_corpus(tmp / "corpus", mb)
        size = sum(p.stat().st_size for p in files)
        home = tmp / "home"
        imported = scale.run_command(["import", str(tmp / "corpus"), "--home", str(home)], tmp)
        with open_store(f"sqlite:///{home / 'continuity.db'}") as store:
            folders = {s.project for s in store.list_sessions() if s.project}
        shared = sorted({project_identity(f, machine="bench").project for f in folders})
        write_team(home, {"url": member_url, "name": "bench", "machine": "bench", "shared": shared})
        pushed = scale.run_command(["sync", "--home", str(home), "--json"], tmp)
        report = json.loads(pushed["stdout"])
        again = scale.run_command(["sync", "--home", str(home), "--json"], tmp)
        with engine.connect() as conn:
            team_bytes = conn.execute(
                text("SELECT coalesce(sum(octet_length(row_json)), 0) FROM continuity_team.entries")
            ).scalar()
            words = [
                w
                for (body,) in conn.execute(
                    text("SELECT body FROM continuity_team.entries ORDER BY random() LIMIT 500")
                )
                for w in body.split()
                if w.isalpha() and len(w) > 4
            ]
        engine.dispose()
        team = TeamStore(member_url)
        rng = random.Random(7)
        times = []
        for _ in range(args.queries if words else 0):
            q = " ".join(rng.sample(words, 2))
            t0 = time.perf_counter()
            team.search(q, limit=20)
            times.append((time.perf_counter() - t0) * 1000)
        team.close()
        times.sort()
        figures: dict[str, Any] = {
            "corpus_mb": size / MB,
            "import_seconds": imported["seconds"],
            "import_mb_s": size / MB / imported["seconds"],
            "push_seconds": pushed["seconds"],
            "push_mb_s": size / MB / pushed["seconds"],
            "push_to_import_time_ratio": pushed["seconds"] / imported["seconds"],
            "rows_pushed": report["rows"],
            "sessions_pushed": report["sessions"],
            "team_row_json_mb": team_bytes / MB,
            "sync_nothing_new_seconds": again["seconds"],
            "search_queries": len(times),
            "search_median_ms": statistics.median(times) if times else None,
            "search_p99_ms": times[min(len(times) - 1, int(len(times) * 0.99))] if times else None,
        }
        figures.update(_daemon_lag(home, tmp, owner_url, shared, args.lag_sessions))
        for k, v in figures.items():
            print(f"{k:28} {v:.3f}" if isinstance(v, float) else f"{k:28} {v}")
        out = HERE / "results"
        out.mkdir(exist_ok=True)
        (out / "team.json").write_text(json.dumps(figures, indent=2) + "\n")
        return 0
    finally:
        with server.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)'))
            conn.execute(text(f'DROP ROLE IF EXISTS "{member}"'))
            conn.execute(text(f'DROP ROLE IF EXISTS "{group}"'))
        server.dispose()
        shutil.rmtree(tmp, ignore_errors=True)


def _hook(home: Path, url: str, event: str, fields: dict[str, Any]) -> None:
    """The real hook command (as installed) with the recorded Claude Code JSON of ``event``."""
    import subprocess

    from continuity.daemon.hooks.install import hook_argv

    fixture = HERE.parent / "tests" / "fixtures" / "hooks" / "claude-code" / f"{event}.json"
    payload = {**json.loads(fixture.read_text()), **fields}
    env = {**os.environ, "CONTINUITY_HOME": str(home), "CONTINUITY_DAEMON_URL": url}
    subprocess.run(
        [*hook_argv(), event, "--harness", "claude-code"],
        input=json.dumps(payload).encode(),
        env=env,
        capture_output=True,
        timeout=30,
        check=True,
    )


def _line(key: str, cwd: str, n: int, role: str, text: str) -> str:
    message: dict[str, Any] = {"role": role, "content": text}
    if role == "assistant":
        message = {
            "id": f"msg_{n}",
            "role": role,
            "model": "claude-opus-4-6",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 5, "output_tokens": 9},
        }
    return json.dumps(
        {
            "sessionId": key,
            "cwd": cwd,
            "version": "2.1.40",
            "type": role,
            "isSidechain": False,
            "userType": "external",
            "uuid": f"u{n}",
            "parentUuid": f"u{n - 1}" if n > 1 else None,
            "timestamp": f"2026-12-06T10:00:{n:02d}.000Z",
            "message": message,
        }
    )


def _daemon_lag(
    home: Path, tmp: Path, owner_url: Any, shared: list[str], sessions: int
) -> dict[str, Any]:
    """Phase 4 (module docstring): ``{daemon_lag_sessions, daemon_lag_median_s,
    daemon_lag_max_s}``."""
    import subprocess

    from continuity.team.settings import team_settings, team_values, write_team

    if sessions < 1:
        return {}
    repo = tmp / "lag-repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "remote", "add", "origin", "git@github.com:bench/lag.git"],
        check=True,
    )
    settings = team_settings(home)
    values = team_values(settings)
    values["shared"] = [*shared, "git:github.com/bench/lag"]
    write_team(home, values)
    with open(home / "config.toml", "a") as fh:
        fh.write("\n[archive]\nenabled = false\n")
    log = open(tmp / "daemon.log", "wb")  # noqa: SIM115 - the child's, closed below
    daemon = subprocess.Popen(
        [sys.executable, "-m", "continuity.daemon.server", "--home", str(home), "--port", "0"],
        env={**os.environ, "CONTINUITY_HOME": str(home)},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    engine = create_engine(owner_url)
    lags = []
    try:
        url_file = home / "daemon.url"
        deadline = time.monotonic() + 60
        while not url_file.exists():
            if daemon.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the daemon did not start: see " + str(tmp / "daemon.log"))
            time.sleep(0.05)
        url = url_file.read_text().strip()
        time.sleep(3)  # its first sync (the whole workspace was pushed already)
        for i in range(sessions):
            key = f"bench-lag-{uuid.uuid4().hex[:8]}-{i}"
            path = tmp / "lag" / f"{key}.jsonl"
            path.parent.mkdir(exist_ok=True)
            base = {"session_id": key, "cwd": str(repo), "transcript_path": str(path)}
            _hook(home, url, "session-start", {**base, "source": "startup"})
            with open(path, "a") as fh:
                fh.write(_line(key, str(repo), 1, "user", f"bench prompt {i}") + "\n")
            _hook(home, url, "user-prompt-submit", {**base, "prompt": f"bench prompt {i}"})
            with open(path, "a") as fh:
                fh.write(_line(key, str(repo), 2, "assistant", f"bench answer {i}") + "\n")
            _hook(home, url, "stop", {**base, "last_assistant_message": "done"})
            _hook(home, url, "session-end", {**base, "reason": "exit"})
            t0 = time.monotonic()
            while True:
                with engine.connect() as conn:
                    n = conn.execute(
                        text("SELECT count(*) FROM continuity_team.entries WHERE session_key = :k"),
                        {"k": key},
                    ).scalar()
                if n and n >= 2:
                    break
                if time.monotonic() - t0 > 120:
                    raise RuntimeError(f"{key} did not reach the team store in 120 s")
                time.sleep(0.05)
            lags.append(time.monotonic() - t0)
            _log(f"daemon lag {i + 1}/{sessions}: {lags[-1]:.2f} s")
    finally:
        engine.dispose()
        daemon.terminate()
        daemon.wait(60)
        log.close()
    return {
        "daemon_lag_sessions": len(lags),
        "daemon_lag_median_s": statistics.median(lags),
        "daemon_lag_max_s": max(lags),
    }


if __name__ == "__main__":
    raise SystemExit(main())
