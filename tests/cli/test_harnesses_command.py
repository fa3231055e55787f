"""``continuity harnesses`` prints the registry (issue 42 item 1); ``--json`` its list."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from continuity.cli.app import app


def test_harnesses_json_is_the_documented_list() -> None:
    done = CliRunner().invoke(app, ["harnesses", "--json"])
    assert done.exit_code == 0, done.output
    rows = json.loads(done.stdout)
    by_name = {r["name"]: r for r in rows}
    assert len(rows) == 13
    codex = by_name["codex"]
    assert {k: codex[k] for k in ("import", "live", "recovery", "resume", "mcp")} == dict.fromkeys(
        ("import", "live", "recovery", "resume", "mcp"), True
    )
    assert codex["verified_version"] == "0.171.0"
    assert codex["locations"] == ["$CODEX_HOME/sessions or ~/.codex/sessions"]
    assert by_name["amp"]["import"] is False
    assert by_name["amp"]["verified_version"] is None
    assert (by_name["gemini-cli"]["usage"], by_name["factory-droid"]["usage"]) == (True, False)
    assert by_name["amp"]["usage_note"] == "not read yet"


def test_harnesses_text_names_each_with_its_support() -> None:
    done = CliRunner().invoke(app, ["harnesses"])
    assert done.exit_code == 0, done.output
    assert "opencode (OpenCode): import, live, recovery, resume; verified: 1.18.33" in done.stdout
    assert "amp (Amp): none yet; verified: not run by the e2e suite" in done.stdout
    assert (
        "copilot-cli (GitHub Copilot CLI): import, live, recovery, resume, mcp; verified: 1.0.102"
        in done.stdout
    )
    assert "  usage: counted (`session.usage_record` events, one per model call)" in done.stdout
    assert "  usage: none (its session file records no token usage;" in done.stdout
    # a fresh-user review: `sessions --harness` takes the two frameworks; the list names them
    assert done.stdout.splitlines()[-1] == (
        "langgraph and openai-agents: Python agent frameworks, not CLIs; their sessions are "
        "recorded by continuity's adapters (continuity.adapters) and listed with "
        "`continuity sessions --harness NAME`"
    )
