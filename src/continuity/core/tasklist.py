"""The harness's task list, read from its plan/todo tool calls (bug vector B27).

A checkpoint or a compaction summary must carry the open items of the agent's newest task
list, or the tasks vanish across compaction (openai/codex#31822, anthropics/claude-code#30961).
Each harness writes the whole list on every call, so the newest call is the current list:

- Claude Code ``TodoWrite`` (and OpenCode ``todowrite``): ``{"todos": [{"content",
  "status", "activeForm", "id"?, "priority"?}]}``; ``status`` is ``pending``, ``in_progress``
  or ``completed`` (OpenCode also ``cancelled``). Older Claude Code items carry an ``id``.
- Codex ``update_plan``: ``{"explanation"?, "plan": [{"step", "status"}]}`` (the arguments
  string is parsed to a dict by the reader).

Claude Code's incremental task tools (``TaskCreate``/``TaskUpdate``, ids assigned in the
result) are not a whole list and are not read here. No I/O; imports nothing of ours.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: At most this many items are read from one list (a list is written whole by the agent).
MAX_ITEMS = 50
#: Statuses that close an item; anything else (pending, in_progress, unknown) is open.
CLOSED = frozenset({"completed", "complete", "done", "cancelled", "canceled"})
_STATUS = {
    "complete": "completed",
    "done": "completed",
    "canceled": "cancelled",
    "in-progress": "in_progress",
    "inprogress": "in_progress",
    "active": "in_progress",
    "todo": "pending",
    "": "pending",
}


@dataclass(frozen=True, slots=True)
class TaskItem:
    """One item of a task list: ``title`` as the agent wrote it (characters, untrimmed of
    meaning; callers clip and redact), ``status`` normalised to ``pending``, ``in_progress``,
    ``completed`` or ``cancelled`` (other values kept as written), ``id`` when the tool
    gives one."""

    title: str
    status: str
    id: str | None = None

    @property
    def open(self) -> bool:
        """True unless the item is completed or cancelled."""
        return self.status not in CLOSED

    def label(self) -> str:
        """``title`` plus `` (id X)`` when the item has an id."""
        return f"{self.title} (id {self.id})" if self.id else self.title


def _status(value: Any) -> str:
    text = str(value or "").strip().lower()
    return _STATUS.get(text, text)


def _item(raw: Any, title_keys: tuple[str, ...]) -> TaskItem | None:
    if isinstance(raw, str):
        return TaskItem(raw, "pending") if raw.strip() else None
    if not isinstance(raw, dict):
        return None
    title = next(
        (raw[k] for k in title_keys if isinstance(raw.get(k), str) and raw[k].strip()), None
    )
    if title is None:
        return None
    ident = raw.get("id")
    ident = (
        str(ident)
        if isinstance(ident, (str, int)) and not isinstance(ident, bool) and str(ident).strip()
        else None
    )
    return TaskItem(" ".join(title.split()), _status(raw.get("status")), ident)


def task_list(arguments: Any) -> tuple[TaskItem, ...] | None:
    """The task list a tool call writes, or None when the call is not a task-list call.

    ``arguments`` is the call's parsed input. A ``todos`` list (TodoWrite, todowrite) or a
    ``plan`` list (update_plan) is a task list whatever the tool's name; a
    ``plan`` that is a string (Claude Code ``ExitPlanMode``) is not. An empty list is a list
    (the agent cleared it): ``()``. Never raises on odd shapes; bad items are skipped.
    """
    if not isinstance(arguments, dict):
        return None
    raw, keys = arguments.get("todos"), ("content", "title", "text", "activeForm")
    if not isinstance(raw, list):
        raw, keys = arguments.get("plan"), ("step", "title", "content", "text")
        if not isinstance(raw, list):
            return None
    items = (_item(r, keys) for r in raw[:MAX_ITEMS])
    return tuple(i for i in items if i is not None)


def open_items(items: tuple[TaskItem, ...] | None) -> list[TaskItem]:
    """The open items of ``items``, in-progress ones first, then the rest in list order."""
    opened = [i for i in items or () if i.open]
    return [i for i in opened if i.status == "in_progress"] + [
        i for i in opened if i.status != "in_progress"
    ]
