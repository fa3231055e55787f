"""A small workspace every browse test reads: three sessions (Claude Code with a compaction, a
checkpoint, a long tool output, media, hostile HTML/ANSI and a secret; a Codex one; a Claude
Code one with an Edit, markdown and rows outside the conversation, untitled: issue 44) and a
subagent session; ``build_usage`` adds three imported sessions whose files record token usage
over the last seven days (the usage page, issue 44 item 2)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson

from continuity.core.model import (
    Checkpoint,
    CheckpointTrigger,
    Entry,
    EntryKind,
    MediaBlock,
    Role,
    Session,
    TextBlock,
)
from tests.builders import CP, A, T, U, call, load

#: The Edit of the ``cc-edit`` session (issue 44: shown as a unified diff).
EDIT_OLD = "def parse(path):\n    return load(path)\n"
EDIT_NEW = 'def parse_file(path):\n    """Parse the file at path."""\n    return load(path)\n'
EDIT_REQUEST = "Rename parse to parse_file in parser.py and give it a docstring"
#: The assistant's answer, in markdown (with raw HTML that must not pass).
EDIT_ANSWER = (
    "Renamed **parse** to `parse_file`:\n\n- parser.py: the new name\n- a docstring\n\n"
    '<img src=x onerror="window.pwned = 3"> done'
)

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
SECRET = "sk-ant-api03-ZYXWVUTSRQPONMLKJIHGFEDCBA0123456789abcdefgh"
HOSTILE = (
    '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"> \x1b[31mred\x1b[0m'
)
LONG = "\n".join(f"line {i} of the migration log" for i in range(80))


def _session(store, key, rows, *, harness, project, title, agent="default"):
    store.upsert_session(
        Session(key=key, harness=harness, project=project, agent_id=agent, title=title)
    )
    for i, e in enumerate(rows):
        e.timestamp = T0 + timedelta(minutes=i)
    load(store, rows, key=key)
    store.upsert_session(
        Session(
            key=key,
            harness=harness,
            project=project,
            agent_id=agent,
            title=title,
            started_at=T0,
            ended_at=T0 + timedelta(hours=1),
            entry_count=store.get_session(key).entry_count,
        )
    )


def build(store) -> None:
    """Fill ``store`` with the corpus."""
    media = Entry(
        EntryKind.MESSAGE,
        Role.USER,
        (TextBlock("here is the screenshot"), MediaBlock("image/png", 48213)),
    )
    _session(
        store,
        "cc-alembic",
        [
            U("add an alembic migration for the search index"),
            A(call("c1", "Bash", command="alembic upgrade head"), text="I will run the migration"),
            T("c1", text=LONG),
            CP("Summary: the migration for the search index was written and applied"),
            U(f"the key is {SECRET} and this text is {HOSTILE}"),
            media,
            A(text="Done: the alembic revision 0013 indexes every entry"),
        ],
        harness="claude-code",
        project="/home/ana/app",
        title="Alembic search index",
    )
    store.insert_checkpoint(
        Checkpoint(
            session_key="cc-alembic",
            harness="claude-code",
            project="/home/ana/app",
            project_normalized="/home/ana/app",
            trigger=CheckpointTrigger.PRE_COMPACTION,
            digest="## Checkpoint digest\nworking on the alembic index",
            prompt_count=2,
            created_at=T0 + timedelta(minutes=2, seconds=30),
        ),
        max_per_session=50,
    )
    _session(
        store,
        "cx-parser",
        [
            U("fix the flaky parser test"),
            A(text="alembic is not involved; the parser test is fixed"),
        ],
        harness="codex",
        project="/home/ana/other",
        title="Flaky parser",
    )
    hidden = {"visible": False}
    _session(
        store,
        "cc-edit",
        [
            Entry(EntryKind.EVENT, Role.SYSTEM, type_name="queue-operation/enqueue", **hidden),
            U(EDIT_REQUEST),
            Entry(
                EntryKind.CONTEXT,
                Role.SYSTEM,
                (TextBlock("date: 2026-11-20"),),
                type_name="attachment/date",
                **hidden,
            ),
            A(
                call(
                    "e1",
                    "Edit",
                    file_path="/home/ana/app/parser.py",
                    old_string=EDIT_OLD,
                    new_string=EDIT_NEW,
                ),
                text="I will rename it.",
            ),
            T("e1", text="The file /home/ana/app/parser.py has been updated."),
            Entry(EntryKind.EVENT, Role.SYSTEM, type_name="file-history-snapshot", **hidden),
            A(text=EDIT_ANSWER),
        ],
        harness="claude-code",
        project="/home/ana/app",
        title=None,
    )
    _session(
        store,
        "cc-alembic/agent-7",
        [U("subagent: read the alembic docs")],
        harness="claude-code",
        project="/home/ana/app",
        title=None,
        agent="7",
    )


# ---------------------------------------------------------------------------- usage (issue 44)

#: Fresh ids of the sessions with usage (real-shaped files, imported: usage is read from the
#: raw lines the importer keeps).
USAGE_CC = "5e0c9a1e-3b7d-4c2a-9f1e-6d2b8a4c7e10"
USAGE_CX = "019af3c2-7d41-7b90-a8e5-2c6f1d0b9e37"
USAGE_OSS = "019af3c2-9e02-7c11-b4d6-8a1e5f3c2d48"
USAGE_DAYS = 7


def usage_day(d: int, now: datetime) -> datetime:
    """09:00 UTC ``d`` days before ``now``'s day (0: today): inside a ``7d`` range."""
    midnight = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight - timedelta(days=d) + timedelta(hours=9)


def _z(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


#: How busy each day ``d`` (0: today .. 6 days ago) was, so the chart has a shape.
_BUSY = (2, 5, 3, 6, 1, 4, 3)


#: Per day ``d``: Claude Code's opus and haiku responses (input, output, cache write, cache
#: read), Codex's gpt-5.1-codex ones (input with cached, cached, output, reasoning) and the
#: local gpt-oss model's (no price).
def _opus(d: int) -> tuple[int, int, int, int]:
    w = _BUSY[d]
    return (40 * w, 2_500 * w, 30_000 * w, 280_000 * w)


def _haiku(d: int) -> tuple[int, int, int, int]:
    w = _BUSY[d]
    return (12 * w, 350 * w, 5_000 * w, 70_000 * w)


def _codex(d: int) -> tuple[int, int, int, int]:
    w = 7 - _BUSY[d]
    return (60_000 * w, 48_000 * w, 1_500 * w, 400 * w)


def _oss(d: int) -> tuple[int, int, int, int]:
    w = 1 + d % 3
    return (30_000 * w, 0, 1_200 * w, 0)


def usage_expected() -> dict[str, dict[str, int]]:
    """The total tokens per model (input, output, cache write, cache read; Codex's cached
    input as cache read) the usage files hold, computed from the tables above."""
    out: dict[str, dict[str, int]] = {}
    for model, fn, codex in (
        ("claude-opus-4-6", _opus, False),
        ("claude-haiku-4-5-20251001", _haiku, False),
        ("gpt-5.1-codex", _codex, True),
        ("gpt-oss:20b", _oss, True),
    ):
        sums = dict.fromkeys(("input", "output", "cache_write", "cache_read"), 0)
        for d in range(USAGE_DAYS):
            a, b, c, e = fn(d)
            if codex:  # input holds the cached part; output the reasoning
                sums["input"] += a - b
                sums["cache_read"] += b
                sums["output"] += c
            else:
                sums["input"] += a
                sums["output"] += b
                sums["cache_write"] += c
                sums["cache_read"] += e
        out[model] = sums
    return out


def _claude_code_lines(now: datetime) -> list[dict]:
    common = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/ana/app",
        "sessionId": USAGE_CC,
        "version": "2.1.38",
        "gitBranch": "main",
    }
    lines: list[dict] = []
    parent = None
    for d in reversed(range(USAGE_DAYS)):
        at = usage_day(d, now)
        uid = f"u-{d}-0000-4000-8000-{USAGE_CC[-12:]}"
        lines.append(
            {
                **common,
                "parentUuid": parent,
                "type": "user",
                "message": {"role": "user", "content": f"Profile the importer, day {7 - d}"},
                "uuid": uid,
                "timestamp": _z(at),
            }
        )
        parent = uid
        for n, (model, fn) in enumerate(
            (("claude-opus-4-6", _opus), ("claude-haiku-4-5-20251001", _haiku))
        ):
            i, o, cw, cr = fn(d)
            usage = {
                "input_tokens": i,
                "cache_creation_input_tokens": cw,
                "cache_read_input_tokens": cr,
                "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": cw},
                "output_tokens": o,
                "service_tier": "standard",
            }
            # Claude Code streams a message as several lines, each repeating its usage:
            # ccusage (and continuity) count it once per message.id + requestId
            for part, content in enumerate(
                (
                    {"type": "thinking", "thinking": "Measuring first.", "signature": "sig"},
                    {
                        "type": "text",
                        "text": f"Day {7 - d}: the importer spends most time parsing.",
                    },
                )
            ):
                aid = f"a-{d}-{n}{part}00-4000-8000-{USAGE_CC[-12:]}"
                lines.append(
                    {
                        **common,
                        "parentUuid": parent,
                        "message": {
                            "model": model,
                            "id": f"msg_01Usage{d}{n}Cc{USAGE_CC[:8]}",
                            "type": "message",
                            "role": "assistant",
                            "content": [content],
                            "stop_reason": None,
                            "stop_sequence": None,
                            "usage": usage,
                        },
                        "requestId": f"req_011Usage{d}{n}{USAGE_CC[:8]}",
                        "type": "assistant",
                        "uuid": aid,
                        "timestamp": _z(at + timedelta(seconds=5 + 20 * n + part)),
                    }
                )
                parent = aid
    return lines


def _codex_lines(
    now: datetime, key: str, model: str, fn, provider: str, cwd: str, ask: str
) -> list[dict]:
    start = usage_day(USAGE_DAYS - 1, now)
    lines: list[dict] = [
        {
            "timestamp": _z(start),
            "type": "session_meta",
            "payload": {
                "id": key,
                "timestamp": _z(start),
                "cwd": cwd,
                "originator": "codex_cli_rs",
                "cli_version": "0.171.0",
                "source": "cli",
                "model_provider": provider,
            },
        }
    ]
    total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0}
    reasoning = 0
    for d in reversed(range(USAGE_DAYS)):
        at = usage_day(d, now) + timedelta(hours=2)
        i, cached, o, r = fn(d)
        last = {
            "input_tokens": i,
            "cached_input_tokens": cached,
            "output_tokens": o,
            "reasoning_output_tokens": r,
            "total_tokens": i + o,
        }
        total = {k: total[k] + last[k] for k in total}
        reasoning += r
        turn = f"turn-{7 - d}"
        lines += [
            {
                "timestamp": _z(at),
                "type": "turn_context",
                "payload": {"turn_id": turn, "cwd": cwd, "model": model, "effort": "medium"},
            },
            {
                "timestamp": _z(at),
                "type": "event_msg",
                "payload": {
                    "type": "user_message",
                    "message": f"{ask}, part {7 - d}\n",
                    "images": [],
                },
            },
            {
                "timestamp": _z(at + timedelta(seconds=30)),
                "type": "event_msg",
                "payload": {
                    "type": "token_count",
                    "info": {
                        "total_token_usage": {
                            **total,
                            "reasoning_output_tokens": reasoning,
                            "total_tokens": total["input_tokens"] + total["output_tokens"],
                        },
                        "last_token_usage": last,
                        "model_context_window": 258400,
                    },
                    "rate_limits": None,
                },
            },
            {
                "timestamp": _z(at + timedelta(seconds=31)),
                "type": "event_msg",
                "payload": {"type": "agent_message", "message": f"Validation tightened ({7 - d})."},
            },
        ]
    return lines


def build_usage(store, folder: Path, now: datetime | None = None) -> None:
    """Import into ``store`` three real-shaped session files with usage over the last
    ``USAGE_DAYS`` days before ``now`` (default: the current time), written under ``folder``:
    Claude Code in /home/ana/app (opus and haiku, each message streamed as two lines
    repeating its usage), Codex in /home/ana/api (gpt-5.1-codex, running totals) and a Codex
    session of a local model without a price (gpt-oss:20b). ``usage_expected`` gives the
    totals per model."""
    from continuity.formats.importer import import_file

    now = now or datetime.now(UTC)
    day = usage_day(USAGE_DAYS - 1, now)
    files = {
        folder / "claude" / "-home-ana-app" / f"{USAGE_CC}.jsonl": _claude_code_lines(now),
        folder
        / "codex"
        / day.strftime("%Y/%m/%d")
        / f"rollout-{day:%Y-%m-%dT%H-%M-%S}-{USAGE_CX}.jsonl": _codex_lines(
            now,
            USAGE_CX,
            "gpt-5.1-codex",
            _codex,
            "openai",
            "/home/ana/api",
            "Tighten the API's request validation",
        ),
        folder
        / "codex"
        / day.strftime("%Y/%m/%d")
        / f"rollout-{day:%Y-%m-%dT%H-%M-%S}-{USAGE_OSS}.jsonl": _codex_lines(
            now,
            USAGE_OSS,
            "gpt-oss:20b",
            _oss,
            "oss",
            "/home/ana/api",
            "List the API's error codes with the local model",
        ),
    }
    for path, lines in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
        report = import_file(store, path)
        assert report.status == "imported" and report.session_key, report
