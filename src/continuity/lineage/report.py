"""What ``continuity lineage SESSION`` shows: everything the lineage holds for one session
(its manifest, each artifact with its check, its DAG nodes and edges, its thread head) and how
to repair what is damaged or missing.

The repair of a damaged artifact is always the same (``lineage`` module docstring,
"Integrity"): delete the file and consolidate the session again; a missing file of the current
capture is written again by consolidating. ``repair_hint`` words it; the consolidation pass
puts it in every ``ArtifactCorrupt`` it raises.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from continuity.core.config import resolve_home
from continuity.lineage import artifacts as ln, sentence as sn
from continuity.lineage.frontmatter import ArtifactError
from continuity.lineage.temporal_dag import thread_of

if TYPE_CHECKING:
    from continuity.store import SqlStore


def repair_hint(key: str, path: Path | None, *, missing: bool = False) -> str:
    """How to repair a damaged artifact of session ``key``: delete it (``path``, else "the
    damaged file") and consolidate the session again; for a ``missing`` one, only the
    latter."""
    command = f"`continuity consolidate {shlex.quote(sn.one_line(key))}`"
    if missing:
        return f"to repair: run {command} again (it writes the missing file)"
    target = str(path) if path is not None else "the damaged file"
    return f"to repair: delete {target} and run {command} again"


def session_lineage(
    store: SqlStore, session_key: str, *, home: Any = None, agent_id: str | None = None
) -> dict[str, Any]:
    """Everything the lineage holds for one session (``continuity lineage --json``): the
    manifest's fields, each artifact with its check (``ok``, ``missing`` for a file the
    manifest names that is gone, or the error), the DAG nodes of the session with their edges,
    its thread head, and ``problems``: the artifacts whose check is not ``ok``, each with how
    to repair it (``repair``)."""
    session = store.get_session(session_key)
    agent = agent_id or (session.agent_id if session else "default")
    token = ln.session_token(agent, session_key)
    artifacts = _checked_artifacts(home, token)
    manifest = next((a for a in artifacts if a["kind"] == "manifest" and a["check"] == "ok"), None)
    nodes = store.dag_nodes(agent, session_key=session_key)
    artifacts += _missing(
        home, manifest, artifacts, consolidated=any(n.kind == "session" for n in nodes)
    )
    root = resolve_home(home)
    problems = [
        {
            **a,
            "repair": repair_hint(
                session_key,
                root / a["path"] if a["path"] else None,
                missing=a["check"] == "missing",
            ),
        }
        for a in artifacts
        if a["check"] != "ok"
    ]
    edges = store.dag_edges(agent, node_ids=[n.node_id for n in nodes]) if nodes else []
    tk = thread_of(agent, session.project if session else None, session_key)[0]
    head = store.thread_head(agent, nodes[0].thread_key or tk) if nodes else None
    return {
        "session": session_key,
        "agent_id": agent,
        "token": token,
        "manifest": dict(ln.read_artifact(root / manifest["path"]).fields) if manifest else None,
        "artifacts": artifacts,
        "problems": problems,
        "nodes": [
            {
                "id": n.node_id,
                "kind": n.kind,
                "label": n.label,
                "content": n.content,
                "earliest_at": ln.iso(n.earliest_at),
                "latest_at": ln.iso(n.latest_at),
                "meta": n.meta,
            }
            for n in nodes
        ],
        "edges": [
            {"from": e.src_id, "to": e.dst_id, "kind": e.kind, "at": ln.iso(e.at)} for e in edges
        ],
        "thread": None
        if head is None
        else {
            "key": head.thread_key,
            "label": head.label,
            "session": head.session_key,
            "latest_at": ln.iso(head.latest_at),
            "sample": head.sample,
            "open_items": list(head.open_items),
            "source": head.source_ref,
        },
    }


def _checked_artifacts(home: Any, token: str) -> list[dict[str, Any]]:
    """Each artifact file of session ``token`` in ``<home>/memory`` (by name) with its check:
    ``ok`` with its kind, path and memory sentence, else the error."""
    folder = ln.memory_dir(home)
    artifacts = []
    for path in sorted(folder.glob(f"*--{token}--*.md")) if folder.is_dir() else []:
        try:
            art = ln.read_artifact(path)
            artifacts.append(
                {
                    "kind": art.kind,
                    "path": art.rel,
                    "check": "ok",
                    "memory_sentence": art.fields.get("memory_sentence"),
                    "quality": art.fields.get("memory_sentence_quality"),
                }
            )
        except ArtifactError as exc:
            artifacts.append(
                {
                    "kind": (ln.parse_name(path.name) or ("", "", "?"))[2],
                    "path": ln.rel_path(path.name),
                    "check": str(exc),
                }
            )
    return artifacts


def _missing(
    home: Any, manifest: dict[str, Any] | None, found: list[dict[str, Any]], *, consolidated: bool
) -> list[dict[str, Any]]:
    """Artifact entries (check ``missing``) for the current capture's files the session's
    manifest names that are gone, or for the manifest itself when the session was consolidated
    and it is gone. Superseded captures are history: a deleted one is not reported."""
    if manifest is None:
        if consolidated and not any(a["kind"] == "manifest" for a in found):
            return [{"kind": "manifest", "path": None, "check": "missing"}]
        return []
    fields = ln.read_artifact(resolve_home(home) / manifest["path"]).fields
    named = [fields.get(k) for k in ("transcript_path", "summary_path", "compaction_path")]
    have = {a["path"] for a in found}
    out = []
    for rel in dict.fromkeys(r for r in named if isinstance(r, str) and r):
        if rel not in have and not (resolve_home(home) / rel).is_file():
            parsed = ln.parse_name(Path(rel).name)
            out.append({"kind": parsed[2] if parsed else "?", "path": rel, "check": "missing"})
    return out
