"""GitHub Copilot CLI session state (issue 42 item 2): ``~/.copilot/session-state/<session
id>/events.jsonl`` (``$COPILOT_HOME/session-state`` when set), observed from copilot 1.0.102 run
offline (``COPILOT_OFFLINE=true`` with a BYOK provider: no GitHub login) and read against the
event schema the CLI ships (``schemas/session-events.schema.json``).

One event a line: ``{"type", "data", "id", "timestamp", "parentId"}`` (``parentId`` the
previous event: a chain). What the reader makes of each:

- ``session.start`` (``data.sessionId``: the session key, ``copilotVersion``,
  ``context.cwd``), ``session.resume`` (``context.cwd``): events giving the facts;
  ``session.title_changed``: the title;
- ``user.message`` (``content``: what the user typed; ``transformedContent``, what the model
  got, stays raw): a request; one starting with the preface ``resume --in copilot-cli``
  writes (``formats.resumed.NOTICE_START``): a compaction row, its summary;
- ``system.message``: the system prompt, context (not in views);
- ``assistant.message``: ``content`` text, ``reasoningText`` as thinking, ``toolRequests``
  (``toolCallId``, ``name``, ``arguments``) as tool calls; with text and no call it ends its
  run; ``parentToolCallId`` (a subagent's message) marks it sidechain;
- ``tool.execution_complete``: the tool result of ``toolCallId`` (``result.content``, or
  ``error.message``; ``success`` false is an error);
- ``session.compaction_complete`` with a ``summaryContent``: a compaction;
- ``session.error``: an event ending its run as failed; ``abort``: as interrupted;
- every other event type the schema of 1.0.102 names (``KNOWN_EVENTS``): an event; any other
  type: opaque (counted, kept raw).

Not applied yet: ``session.snapshot_rewind`` (its removed events stay in view).
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

from continuity.core.model import (
    Block,
    CompactionInfo,
    Entry,
    EntryKind,
    Role,
    RunStatus,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from continuity.core.text import clean, object_at
from continuity.formats.base import FormatReader, call_arguments, file_stem, str_field, text_of
from continuity.formats.jsonl import Line
from continuity.formats.resumed import NOTICE_START

HARNESS = "copilot-cli"
#: The event types of copilot 1.0.102's session-events schema (an event of another type is
#: opaque: a newer CLI's, counted in the import report).
KNOWN_EVENTS = frozenset(
    """
    abort agent.interrupted assistant.fusion_phase_activity assistant.fusion_phase_completed
    assistant.fusion_phase_failed assistant.fusion_phase_started assistant.idle assistant.intent
    assistant.message assistant.message_delta assistant.message_start assistant.reasoning
    assistant.reasoning_delta assistant.server_tool_progress assistant.streaming_delta
    assistant.tool_call_delta assistant.turn_end assistant.turn_retry assistant.turn_start
    assistant.usage auto_mode_switch.completed auto_mode_switch.requested capabilities.changed
    command.completed command.execute command.queued commands.changed elicitation.completed
    elicitation.requested exit_plan_mode.completed exit_plan_mode.requested
    external_tool.completed external_tool.requested hook.end hook.progress hook.start
    human_response.recorded mcp.headers_refresh_completed mcp.headers_refresh_required
    mcp.oauth_completed mcp.oauth_recovery_completed mcp.oauth_required mcp.prompts.list_changed
    mcp.resources.list_changed mcp.tools.list_changed mcp_app.tool_call_complete
    model.call_failure model.call_final_result model.call_finished model.call_start
    pending_messages.modified permission.assentDetected permission.carriedForward
    permission.completed permission.contextualAuthorization permission.messageAuthorization
    permission.messageAuthorizationDegraded permission.messageAuthorizationRead
    permission.requested prompt_cache_break sampling.completed sampling.requested
    sandbox.decision session.auto_mode_resolved session.auto_tier_recommendation
    session.auto_tier_switch_failed session.autopilot_objective_changed
    session.autopilot_stopped session.background_tasks_changed session.binary_asset
    session.canvas.closed session.canvas.opened session.canvas.recorded
    session.canvas.registry_changed session.canvas.removed session.canvas.unavailable
    session.compaction_complete session.compaction_start session.completion_receipt
    session.context_changed session.context_cleared session.custom_agents_updated
    session.custom_notification session.error session.extensions.attachments_pushed
    session.extensions_loaded session.fusion_change_checkpoint session.fusion_commit_started
    session.fusion_completed session.fusion_handoff session.fusion_resolved
    session.fusion_route_failed session.fusion_route_started session.handoff session.idle
    session.indexed_search session.info session.managed_plugin_progress
    session.managed_settings_enforced session.managed_settings_resolved
    session.mcp_server_needs_reconnect session.mcp_server_removed
    session.mcp_server_status_changed session.mcp_server_tools_loaded session.mcp_servers_loaded
    session.memory_changed session.mode_changed session.mode_notice_delivered
    session.model_change session.model_deselected session.permission_recovery
    session.permissions_changed session.plan_changed session.quota_observation
    session.remote_steerable_changed session.request_body_compression_disabled session.resume
    session.schedule_cancelled session.schedule_created session.schedule_rearmed
    session.session_limits_changed session.shutdown session.skills_loaded
    session.snapshot_rewind session.start session.task_complete session.title_changed
    session.todos_changed session.tools_updated session.truncation session.usage_checkpoint
    session.usage_info session.usage_record session.warning session.workspace_file_changed
    session_limits_exhausted.completed session_limits_exhausted.requested
    skill.context_delivered skill.context_delivered_ref skill.invoked skill.invoked_ref
    subagent.completed subagent.configured subagent.deselected subagent.failed subagent.selected
    subagent.started system.message system.notification tool.execution_complete
    tool.execution_partial_result tool.execution_progress tool.execution_start tool.shell_output
    tool.user_requested tool_search.activated ui.ephemeral_query user.message
    user_input.completed user_input.requested workflow.run_settled workflow.run_started
    workflow.run_updated
    """.split()
)


def _envelope(obj: Any) -> bool:
    return (
        isinstance(obj, dict)
        and isinstance(obj.get("type"), str)
        and isinstance(obj.get("id"), str)
        and "data" in obj
        and "parentId" in obj
    )


class CopilotCliReader(FormatReader):
    """Reader of Copilot CLI ``events.jsonl`` files (see the module docstring)."""

    harness: ClassVar[str] = HARNESS

    def __init__(self, path: str, head: list[dict], state: dict | None = None) -> None:
        super().__init__(path, head, state)
        for obj in head:
            if _envelope(obj) and obj["type"] == "session.start":
                self._context(object_at(obj, "data"))
        self.restore(state)

    @classmethod
    def sniff(cls, head: list[dict]) -> bool:
        return any(_envelope(o) and o["type"] == "session.start" for o in head[:3]) or (
            sum(1 for o in head[:5] if _envelope(o) and "." in o["type"]) >= 2
        )

    @classmethod
    def claims(cls, obj: Any) -> bool:
        return _envelope(obj) and "." in obj["type"]

    @classmethod
    def file_name(cls, path: str) -> str:
        """The session folder's name (its uuid): every file is ``events.jsonl``, so the stem
        told none apart (fresh-user review of issue 42: 8 folders' files sharing an inner
        session id were merged into one key ``<id>/events``)."""
        name = os.path.basename(path)
        folder = os.path.basename(os.path.dirname(path))
        return folder if name == "events.jsonl" and folder else file_stem(path)

    def key_from_head(self, head: list[dict]) -> str | None:
        for obj in head:
            if _envelope(obj) and obj["type"] == "session.start":
                key = object_at(obj, "data").get("sessionId")
                return key if isinstance(key, str) else None
        return None

    def _context(self, data: dict) -> None:
        cwd = text_of(object_at(data, "context").get("cwd"))
        if cwd:
            self._facts.cwd = cwd
        version = text_of(data.get("copilotVersion"))
        if version:
            self._facts.version = version

    def read(self, line: Line) -> Entry | None:
        obj = line.data or {}
        kind = str_field(obj, "type") or ""
        data = object_at(obj, "data")
        entry = Entry(
            kind=EntryKind.OPAQUE,
            role=Role.SYSTEM,
            visible=False,
            type_name=clean(kind) or "<missing type>",
            native_id=self.string_field(line, obj, "id"),
            timestamp=self.time_field(line, obj.get("timestamp"), "timestamp"),
        )
        try:
            self._read(line, kind, data, entry)
        except Exception as exc:  # noqa: BLE001 - never raise on odd input (formats.md §5.1)
            self.warn(line, f"unreadable {kind or 'event'}: {type(exc).__name__}: {exc}")
            entry.kind, entry.role, entry.blocks, entry.visible = (
                EntryKind.OPAQUE,
                Role.SYSTEM,
                (),
                False,
            )
            entry.is_request, entry.compaction, entry.run_end = False, None, None
        return entry

    def _read(self, line: Line, kind: str, data: dict, entry: Entry) -> None:
        if kind not in KNOWN_EVENTS:
            return  # opaque
        entry.kind = EntryKind.EVENT
        entry.sidechain = isinstance(data.get("parentToolCallId"), str)
        if kind in ("session.start", "session.resume"):
            self._context(data)
            entry.cwd = self._facts.cwd
        elif kind == "session.title_changed":
            title = text_of(data.get("title")).strip()
            if title:
                self._facts.title = title
        elif kind == "user.message":
            text = text_of(data.get("content"))
            if not text:
                self.warn(line, "user.message without content")
            if text.startswith(NOTICE_START):  # the preface `resume --in copilot-cli` wrote
                entry.kind, entry.role, entry.visible = EntryKind.COMPACTION, Role.SYSTEM, True
                entry.blocks = (TextBlock(text),)
                entry.compaction = CompactionInfo(summary=text)
                return
            entry.kind, entry.role, entry.visible = EntryKind.MESSAGE, Role.USER, True
            entry.blocks = (TextBlock(text),) if text else ()
            entry.is_request = bool(text.strip()) and not entry.sidechain
        elif kind == "system.message":
            entry.kind, entry.role = EntryKind.CONTEXT, Role.SYSTEM
            text = text_of(data.get("content"))
            entry.blocks = (TextBlock(text),) if text else ()
        elif kind == "assistant.message":
            self._assistant(line, data, entry)
        elif kind == "tool.execution_complete":
            self._result(line, data, entry)
        elif kind == "session.compaction_complete":
            summary = text_of(data.get("summaryContent")).strip()
            if summary and data.get("success") is not False:
                entry.kind, entry.role, entry.visible = EntryKind.COMPACTION, Role.USER, True
                entry.blocks = (TextBlock(summary),)
                entry.compaction = CompactionInfo(
                    summary=summary, trigger=str_field(data, "trigger")
                )
        elif kind == "session.error":
            entry.run_end = RunStatus.FAILED
        elif kind == "abort":
            entry.run_end = RunStatus.INTERRUPTED

    def _assistant(self, line: Line, data: dict, entry: Entry) -> None:
        blocks: list[Block] = []
        reasoning = text_of(data.get("reasoningText"))
        if reasoning:
            blocks.append(ThinkingBlock(reasoning))
        text = text_of(data.get("content"))
        if text:
            blocks.append(TextBlock(text))
        calls = []
        for request in data.get("toolRequests") or []:
            if not isinstance(request, dict):
                self.warn(line, "toolRequests: a request that is not an object (skipped)")
                continue
            call_id, name = text_of(request.get("toolCallId")), text_of(request.get("name"))
            if not call_id or not name:
                self.warn(line, "toolRequests: a call without toolCallId or name")
            calls.append(ToolCallBlock(call_id, name, call_arguments(request.get("arguments"))))
        entry.kind, entry.role, entry.visible = EntryKind.MESSAGE, Role.ASSISTANT, True
        entry.blocks = (*blocks, *calls)
        if not calls and text.strip():
            entry.run_end = RunStatus.FINISHED

    def _result(self, line: Line, data: dict, entry: Entry) -> None:
        call_id = text_of(data.get("toolCallId"))
        result, error = object_at(data, "result"), object_at(data, "error")
        text = text_of(result.get("content")) or text_of(error.get("message"))
        if not text:
            text = text_of(result.get("detailedContent"))
        if not call_id:
            self.warn(line, "tool.execution_complete without toolCallId")
        entry.kind, entry.role, entry.visible = EntryKind.MESSAGE, Role.TOOL, True
        entry.blocks = (ToolResultBlock(call_id, data.get("success") is False, text),)
