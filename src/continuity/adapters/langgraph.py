"""LangGraph on continuity (issue 46 item 2): a checkpointer and a long-term store kept in the
continuity workspace's database (SQLite by default, PostgreSQL by URL). Needs the
``langgraph`` extra: ``pip install 'continuity[langgraph]'``.

``ContinuitySaver`` is a ``BaseCheckpointSaver``: a graph compiled with it resumes each
``thread_id`` from its last checkpoint after a crash or in a new process. It stores what
LangGraph's own SQL savers store (revision 0021): the checkpoint and its metadata, one blob
per channel version (a checkpoint that changes one channel writes one blob) and each task's
pending writes, every value serialised by LangGraph's serde (``JsonPlusSerializer`` unless
another is given). Besides, each message of the root graph's ``messages`` channel is
recorded as a row of the continuity session named by the thread id (harness ``langgraph``;
``adapters.langgraph_record``), so ``continuity sessions``, ``search``, ``continue`` and
``recall``'s transcripts see the conversation.

``ContinuityStore`` is a ``BaseStore`` (LangGraph's long-term memory): items are kept whole by
namespace and key, and the text of each item (``index`` fields, default every string in its
value) is remembered as a continuity memory (``continuity recall`` finds it), which
``search(query=...)`` ranks with continuity's full-text recall.

Both are thread-safe; their async methods run the sync ones in a worker thread
(``asyncio.to_thread``), as the store is SQLAlchemy's synchronous engine.

Over 600 lines: the whole of one framework's adapter: the checkpointer (sync and async, every
optional capability of LangGraph's conformance suite) and the long-term store, over the tables
of ``store.langgraph``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

try:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import (
        WRITES_IDX_MAP,
        BaseCheckpointSaver,
        ChannelVersions,
        Checkpoint,
        CheckpointMetadata,
        CheckpointTuple,
        get_checkpoint_id,
        get_serializable_checkpoint_metadata,
    )
    from langgraph.checkpoint.serde.base import SerializerProtocol
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        validate_op_namespace,
    )
    from langgraph.store.base.embed import get_text_at_path
except ImportError as exc:  # pragma: no cover - the extra is not installed
    raise ImportError(
        "continuity.adapters.langgraph needs LangGraph: pip install 'continuity[langgraph]'"
    ) from exc

from continuity.core.config import database_url, resolve_home
from continuity.core.errors import InputError
from continuity.store import open_store_raw
from continuity.store.langgraph import GraphCheckpointRow, GraphItem, GraphWrite

if TYPE_CHECKING:
    from continuity.adapters.langgraph_record import ThreadRecorder
    from continuity.store import SqlStore

log = logging.getLogger(__name__)

#: rows read at a time by ``list`` (memory stays bounded by one page of decoded checkpoints)
PAGE_ROWS = 100
#: the channel whose messages are recorded as the thread's continuity session
MESSAGES_CHANNEL = "messages"


def _workspace(where: str | os.PathLike[str] | None) -> tuple[str, Path]:
    """(database URL, workspace folder) as the CLI resolves them: ``where`` a database URL
    (anything with ``://``; the folder is then ``$CONTINUITY_HOME`` or the default), a
    workspace folder (its database ``$CONTINUITY_DATABASE_URL`` or its ``continuity.db``),
    or None (``$CONTINUITY_HOME``, else the platform's data folder). Raises ``ConfigError``
    for an empty path or a path that is a file."""
    if where is not None and "://" in str(where):
        return str(where), resolve_home(None)
    home = resolve_home(where)
    return database_url(home), home


def _configurable(config: RunnableConfig | None, field: str) -> Any:
    """``config["configurable"][field]``; ``InputError`` naming the field when it is missing
    or blank (a blank thread id would name a session no one can ask for by name)."""
    value = ((config or {}).get("configurable") or {}).get(field)
    if value is None or not str(value).strip():
        raise InputError(
            f"config['configurable']['{field}'] is required (the LangGraph "
            f"thread this checkpoint belongs to): pass "
            f"{{'configurable': {{'{field}': ...}}}}"
        )
    return value


def _config(thread_id: str, checkpoint_ns: str, checkpoint_id: str) -> RunnableConfig:
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": checkpoint_ns,
            "checkpoint_id": checkpoint_id,
        }
    }


class _Owned:
    """A store, and whether closing the adapter closes it."""

    store: SqlStore
    _owns_store: bool

    def close(self) -> None:
        """Release the database connections when this object opened the store (``open``);
        a store handed to the constructor is the caller's to close."""
        if self._owns_store:
            self.store.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ContinuitySaver(_Owned, BaseCheckpointSaver[str]):
    """A LangGraph checkpointer over a continuity store (module docstring).

    Build it with ``ContinuitySaver.open(where)`` (a workspace folder, a database URL, or None
    for the CLI's default workspace; close it, or use it as a context manager) or from an open
    ``SqlStore`` (``ContinuitySaver(store, home=...)``, which the caller closes).

    - ``record``: record the root graph's ``messages`` channel as the thread's continuity
      session (default True; needs ``home``, the workspace folder the record files go in);
    - ``serde``: LangGraph's serializer (default ``JsonPlusSerializer``).

    Config shape: ``{"configurable": {"thread_id": str, "checkpoint_ns": str (default ""),
    "checkpoint_id": str (optional)}}``; a missing ``thread_id`` raises ``InputError`` naming
    it. Database failures raise ``StoreError``. Channel versions are strings,
    ``"<32-digit counter>.<16-digit random fraction>"`` (``get_next_version``), compared as
    text; int or float versions given by a caller are kept as their text.
    """

    def __init__(
        self,
        store: SqlStore,
        *,
        home: str | os.PathLike[str] | None = None,
        record: bool = True,
        serde: SerializerProtocol | None = None,
    ) -> None:
        super().__init__(serde=serde)
        self.store = store
        self._owns_store = False
        self._recorder: ThreadRecorder | None = None
        if record and home is not None:
            from continuity.adapters.langgraph_record import ThreadRecorder

            self._recorder = ThreadRecorder(store, Path(home))

    @classmethod
    def open(
        cls,
        where: str | os.PathLike[str] | None = None,
        *,
        record: bool = True,
        serde: SerializerProtocol | None = None,
    ) -> ContinuitySaver:
        """A saver on the workspace ``where`` (see the class docstring), its schema migrated
        to the newest revision. Raises ``ConfigError`` for a bad workspace path and
        ``StoreError`` when the database cannot be opened."""
        url, home = _workspace(where)
        saver = cls(open_store_raw(url), home=home, record=record, serde=serde)
        saver._owns_store = True
        return saver

    # ------------------------------------------------------------------ reading

    def _tuple(
        self, row: GraphCheckpointRow, writes: Sequence[GraphWrite] | None = None
    ) -> CheckpointTuple:
        checkpoint = self.serde.loads_typed(row.checkpoint)
        versions = {ch: str(v) for ch, v in checkpoint.get("channel_versions", {}).items()}
        blobs = self.store.graph_blobs(row.thread_id, row.checkpoint_ns, versions)
        checkpoint["channel_values"] = {
            ch: self.serde.loads_typed(b) for ch, b in blobs.items() if b[0] != "empty"
        }
        if writes is None:
            writes = self.store.graph_writes(
                row.thread_id, row.checkpoint_ns, [row.checkpoint_id]
            ).get(row.checkpoint_id, [])
        return CheckpointTuple(
            config=_config(row.thread_id, row.checkpoint_ns, row.checkpoint_id),
            checkpoint=checkpoint,
            metadata=self.serde.loads_typed(row.metadata),
            parent_config=(
                _config(row.thread_id, row.checkpoint_ns, row.parent_checkpoint_id)
                if row.parent_checkpoint_id
                else None
            ),
            pending_writes=[
                (w.task_id, w.channel, self.serde.loads_typed(w.value)) for w in writes
            ],
        )

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names (its ``checkpoint_id``), or the thread's newest in
        its namespace; None when there is none."""
        thread_id = _configurable(config, "thread_id")
        rows = self.store.graph_checkpoints(
            thread_id=str(thread_id),
            checkpoint_ns=config.get("configurable", {}).get("checkpoint_ns", ""),
            checkpoint_id=get_checkpoint_id(config),
            limit=1,
        )
        return self._tuple(rows[0]) if rows else None

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first: of ``config``'s thread (and its ``checkpoint_ns`` and
        ``checkpoint_id`` when given), or of every thread when ``config`` is None; only those
        whose metadata equals ``filter`` on each of its keys, older than ``before``'s
        checkpoint, at most ``limit``."""
        conf = (config or {}).get("configurable") or {}
        thread_id = conf.get("thread_id")
        before_id = get_checkpoint_id(before) if before else None
        left = limit
        after = None
        while left is None or left > 0:
            rows = self.store.graph_checkpoints(
                thread_id=None if thread_id is None else str(thread_id),
                checkpoint_ns=conf.get("checkpoint_ns"),
                checkpoint_id=conf.get("checkpoint_id"),
                before_id=before_id,
                after=after,
                limit=PAGE_ROWS,
            )
            for row in rows:
                if filter:
                    metadata = self.serde.loads_typed(row.metadata)
                    if any(metadata.get(k) != v for k, v in filter.items()):
                        continue
                yield self._tuple(row)
                if left is not None:
                    left -= 1
                    if left <= 0:
                        return
            if len(rows) < PAGE_ROWS:
                return
            last = rows[-1]
            after = (last.checkpoint_id, last.thread_id, last.checkpoint_ns)

    # ------------------------------------------------------------------ writing

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store ``checkpoint`` (its parent: ``config``'s ``checkpoint_id``) with its metadata
        and the blobs of ``new_versions``; the config naming the stored checkpoint. Then, on
        the root namespace, records the ``messages`` channel (class docstring)."""
        thread_id = str(_configurable(config, "thread_id"))
        checkpoint_ns = config.get("configurable", {}).get("checkpoint_ns", "")
        copy = checkpoint.copy()
        values: dict[str, Any] = copy.pop("channel_values", {})  # type: ignore[misc]
        meta = get_serializable_checkpoint_metadata(config, metadata)
        run_id = meta.get("run_id")
        blobs = {
            (channel, str(version)): (
                self.serde.dumps_typed(values[channel]) if channel in values else ("empty", b"")
            )
            for channel, version in new_versions.items()
        }
        self.store.put_graph_checkpoint(
            GraphCheckpointRow(
                thread_id,
                checkpoint_ns,
                checkpoint["id"],
                config.get("configurable", {}).get("checkpoint_id"),
                run_id if isinstance(run_id, str) else None,
                self.serde.dumps_typed(copy),
                self.serde.dumps_typed(meta),
            ),
            blobs,
        )
        if (
            self._recorder is not None
            and checkpoint_ns == ""
            and MESSAGES_CHANNEL in new_versions
            and MESSAGES_CHANNEL in values
        ):
            messages = values[MESSAGES_CHANNEL]
            if isinstance(messages, (list, tuple)):
                self._recorder.record(thread_id, checkpoint["id"], messages)
        return _config(thread_id, checkpoint_ns, checkpoint["id"])

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store task ``task_id``'s ``writes`` ((channel, value) pairs) against ``config``'s
        checkpoint: a regular write already stored stays, a special one (error, interrupt,
        ...) replaces the stored one, as in LangGraph's savers."""
        thread_id = str(_configurable(config, "thread_id"))
        checkpoint_id = _configurable(config, "checkpoint_id")
        self.store.put_graph_writes(
            thread_id,
            config.get("configurable", {}).get("checkpoint_ns", ""),
            checkpoint_id,
            [
                GraphWrite(
                    task_id,
                    WRITES_IDX_MAP.get(channel, idx),
                    channel,
                    task_path,
                    self.serde.dumps_typed(value),
                )
                for idx, (channel, value) in enumerate(writes)
            ],
        )

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint and write of ``thread_id`` (all namespaces). Its continuity
        session stays: the record of what was said is not the graph's state."""
        self.store.delete_graph_threads([str(thread_id)])

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) whose metadata names one of ``run_ids``."""
        self.store.delete_graph_runs([str(r) for r in run_ids])

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint, blob and write of one thread to another (the whole parent
        chain, so delta channels rebuild)."""
        self.store.copy_graph_thread(str(source_thread_id), str(target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``keep_latest``: keep each namespace's newest checkpoint of each thread, its writes
        and the blobs it names; ``delete``: delete the threads. Another strategy raises
        ``InputError`` naming it. Graphs with LangGraph's beta ``DeltaChannel`` lose the
        history such a channel is rebuilt from (LangGraph's own caveat on ``prune``)."""
        if strategy not in ("keep_latest", "delete"):
            raise InputError(f"strategy: {strategy!r} is not one of 'keep_latest', 'delete'")
        for thread_id in map(str, thread_ids):
            keep: dict[str, GraphCheckpointRow] = {}
            if strategy == "keep_latest":
                after = None
                while True:
                    rows = self.store.graph_checkpoints(
                        thread_id=thread_id, after=after, limit=PAGE_ROWS
                    )
                    for row in rows:
                        keep.setdefault(row.checkpoint_ns, row)
                    if len(rows) < PAGE_ROWS:
                        break
                    after = (rows[-1].checkpoint_id, rows[-1].thread_id, rows[-1].checkpoint_ns)
            blobs = {
                (ns, ch, str(v))
                for ns, row in keep.items()
                for ch, v in self.serde.loads_typed(row.checkpoint)
                .get("channel_versions", {})
                .items()
            }
            self.store.prune_graph_checkpoints(
                thread_id, {(ns, row.checkpoint_id) for ns, row in keep.items()}, blobs
            )

    def get_next_version(self, current: str | int | float | None, channel: None = None) -> str:
        """The version after ``current``: ``"<counter + 1, 32 digits>.<random fraction>"``,
        the form LangGraph's own savers use (the counter read from the text before the
        first ".", or from an int), so versions compare as text."""
        if current is None:
            counter = 0
        elif isinstance(current, (int, float)):
            counter = int(current)
        else:
            counter = int(str(current).split(".")[0])
        return f"{counter + 1:032}.{random.random():016}"

    # ------------------------------------------------------------------ async

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """``get_tuple`` in a worker thread."""
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """``list``, each page read in a worker thread."""
        found = self.list(config, filter=filter, before=before, limit=limit)
        done = object()
        while (item := await asyncio.to_thread(next, found, done)) is not done:
            yield item  # type: ignore[misc]

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """``put`` in a worker thread."""
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """``put_writes`` in a worker thread."""
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """``delete_thread`` in a worker thread."""
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """``delete_for_runs`` in a worker thread."""
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """``copy_thread`` in a worker thread."""
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``prune`` in a worker thread."""
        await asyncio.to_thread(self.prune, thread_ids, strategy=strategy)


# ---------------------------------------------------------------------------- the store


def _matches(value: Any, wanted: Any) -> bool:
    """Whether an item's field ``value`` satisfies the filter value ``wanted``: equality
    (nested objects and lists compared field by field), or an object of operators ``$eq``,
    ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte`` (numbers compared as floats), the filter
    language of LangGraph's stores. Raises ``InputError`` for another operator."""
    if isinstance(wanted, dict) and any(k.startswith("$") for k in wanted):
        return all(_operator(value, op, operand) for op, operand in wanted.items())
    if isinstance(wanted, dict):
        return isinstance(value, dict) and all(_matches(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, (list, tuple)):
        return (
            isinstance(value, (list, tuple))
            and len(value) == len(wanted)
            and all(_matches(a, b) for a, b in zip(value, wanted, strict=True))
        )
    return bool(value == wanted)


def _operator(value: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(value == operand)
    if op == "$ne":
        return bool(value != operand)
    compare = {
        "$gt": float.__gt__,
        "$gte": float.__ge__,
        "$lt": float.__lt__,
        "$lte": float.__le__,
    }.get(op)
    if compare is None:
        raise InputError(f"filter: unknown operator {op!r} (use $eq, $ne, $gt, $gte, $lt, $lte)")
    try:
        return bool(compare(float(value), float(operand)))
    except (TypeError, ValueError):
        return False


def _namespace_matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        part = namespace[: len(path)]
    elif condition.match_type == "suffix":
        part = namespace[len(namespace) - len(path) :]
    else:
        raise InputError(f"match_type: {condition.match_type!r} is not 'prefix' or 'suffix'")
    return all(p == "*" or p == n for n, p in zip(part, path, strict=True))


def _strings(value: Any) -> Iterator[str]:
    """Every string inside ``value`` (dict values, list items), in order."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


class ContinuityStore(_Owned, BaseStore):
    """LangGraph's long-term store over a continuity store (module docstring).

    Build it with ``ContinuityStore.open(where)`` (as ``ContinuitySaver.open``) or from an open
    ``SqlStore``. An item is ``(namespace: tuple[str, ...], key: str, value: dict)``; labels
    follow LangGraph's rules (non-empty, no ".", the first not "langgraph":
    ``InvalidNamespaceError``). ``put(..., index=...)`` names the fields whose text is
    remembered (LangGraph's path syntax, ``"a.b"``, ``"items[*].text"``); None: every string
    of the value; False: nothing (the item is found by ``get``, ``search`` without a query and
    filters, never by a query). The memory is remembered for ``agent_id`` (default
    "default", the one ``continuity recall`` reads), type ``memory_type`` (default "fact"),
    tagged ``langgraph`` and ``langgraph:<namespace joined by '.'>`` (a text remembered
    before, by any item or ``continuity remember``, is one memory and keeps its first tags);
    it is redacted, as every memory is, and it stays when its item is replaced or deleted
    (memories are never deleted; ``search`` returns only the items that still hold it).
    ``search(query=...)`` ranks with continuity's full-text recall (BM25 on SQLite, ``ts_rank`` on PostgreSQL) and
    gives each ``SearchItem`` its score; without a query, items come newest update first.
    TTLs are not supported (``supports_ttl`` False; a ``ttl`` is ignored).
    """

    supports_ttl = False

    def __init__(
        self, store: SqlStore, *, agent_id: str = "default", memory_type: str = "fact"
    ) -> None:
        self.store = store
        self._owns_store = False
        self.agent_id = agent_id
        self.memory_type = memory_type
        #: LangGraph's serializer of item values
        self.serde = JsonPlusSerializer()

    @classmethod
    def open(
        cls,
        where: str | os.PathLike[str] | None = None,
        *,
        agent_id: str = "default",
        memory_type: str = "fact",
    ) -> ContinuityStore:
        """A store on the workspace ``where`` (see ``ContinuitySaver.open``)."""
        url, _home = _workspace(where)
        out = cls(open_store_raw(url), agent_id=agent_id, memory_type=memory_type)
        out._owns_store = True
        return out

    # ------------------------------------------------------------------ ops

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order (each a ``GetOp``, ``SearchOp``, ``PutOp`` or
        ``ListNamespacesOp``), one result each (``Item`` or None, a list of ``SearchItem``,
        None, a list of namespace tuples). Raises ``InvalidNamespaceError`` for a bad label
        and ``InputError`` for an unknown op."""
        out: list[Result] = []
        for op in ops:
            validate_op_namespace(op)
            if isinstance(op, GetOp):
                out.append(self._get(op))
            elif isinstance(op, SearchOp):
                out.append(self._search(op))
            elif isinstance(op, PutOp):
                self._put(op)
                out.append(None)
            elif isinstance(op, ListNamespacesOp):
                out.append(self._namespaces(op))
            else:
                raise InputError(f"op: unknown store operation {type(op).__name__}")
        return out

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` in a worker thread."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _item(self, row: GraphItem, score: float | None = None, search: bool = False) -> Item:
        namespace = tuple(row.namespace.split("."))
        value = self.serde.loads_typed(row.value)
        if search:
            return SearchItem(namespace, row.key, value, row.created_at, row.updated_at, score)
        return Item(
            value=value,
            key=row.key,
            namespace=namespace,
            created_at=row.created_at,
            updated_at=row.updated_at,
        )

    def _get(self, op: GetOp) -> Item | None:
        pair = (".".join(op.namespace), op.key)
        row = self.store.graph_items([pair]).get(pair)
        return self._item(row) if row else None

    def _put(self, op: PutOp) -> None:
        namespace = ".".join(op.namespace)
        if op.value is None:
            self.store.delete_graph_item(namespace, op.key)
            return
        if not isinstance(op.value, dict):
            raise InputError(f"value: expected a dict, got {type(op.value).__name__}")
        # serialised first: a value the serde refuses writes nothing (a fresh-user review saw
        # the memory stored and the item not)
        data = self.serde.dumps_typed(dict(op.value))
        memory_id = None
        text = self._text(op.value, op.index)
        if text:
            memory_id = self._remember(text, namespace)
        self.store.put_graph_item(namespace, op.key, data, memory_id)

    @staticmethod
    def _text(value: dict[str, Any], index: Any) -> str:
        if index is False:
            return ""
        texts = (
            list(_strings(value))
            if index is None
            else [t for path in index for t in get_text_at_path(value, path)]
        )
        return "\n".join(t for t in texts if t and t.strip())

    def _remember(self, text: str, namespace: str) -> str | None:
        from continuity.transcripts.memories import remember

        try:
            return remember(
                self.store,
                text,
                type=self.memory_type,
                agent_id=self.agent_id,
                tags=["langgraph", f"langgraph:{namespace}"[:100]],
                harness="langgraph",
            ).id
        except InputError as exc:  # no word recall could find it by: the item is kept unindexed
            log.info("langgraph store item in %s not indexed: %s", namespace, exc)
            return None

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = ".".join(op.namespace_prefix)
        want = max(0, op.offset) + max(0, op.limit)
        if not op.query:
            found: list[SearchItem] = []
            skip, page = max(0, op.offset), 0
            while len(found) < op.limit:
                rows = self.store.graph_items_under(
                    prefix, offset=page * PAGE_ROWS, limit=PAGE_ROWS
                )
                for row in rows:
                    item = self._item(row, search=True)
                    if not self._passes(item, op.filter):
                        continue
                    if skip:
                        skip -= 1
                        continue
                    found.append(item)  # type: ignore[arg-type]
                    if len(found) == op.limit:
                        break
                if len(rows) < PAGE_ROWS:
                    break
                page += 1
            return found
        from continuity.store.memory import MemoryFilter
        from continuity.transcripts.memories import query_terms

        terms = query_terms(op.query)
        if not terms or want == 0:
            return []
        candidates = max(want * 4, 50)
        while True:
            ranked = self.store.search_memories(
                terms,
                agent_id=self.agent_id,
                limit=candidates,
                filters=MemoryFilter(tags=("langgraph",)),
            )
            scores = {m.memory_id: score for m, score in ranked}
            rows = self.store.graph_items_under(prefix, memory_ids=list(scores), limit=1_000_000)
            items = [self._item(r, scores.get(r.memory_id or "", 0.0), search=True) for r in rows]
            hits = sorted(
                (i for i in items if self._passes(i, op.filter)),
                key=lambda i: -(i.score or 0.0),  # type: ignore[attr-defined]
            )
            if len(hits) >= want or len(ranked) < candidates:
                return hits[op.offset : want]  # type: ignore[return-value]
            candidates *= 4

    @staticmethod
    def _passes(item: Item, wanted: dict[str, Any] | None) -> bool:
        return not wanted or all(_matches(item.value.get(k), v) for k, v in wanted.items())

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        found = set()
        for name in self.store.graph_namespaces():
            namespace = tuple(name.split("."))
            if all(_namespace_matches(namespace, c) for c in op.match_conditions or ()):
                found.add(namespace[: op.max_depth] if op.max_depth is not None else namespace)
        return sorted(found)[max(0, op.offset) : max(0, op.offset) + max(0, op.limit)]


__all__ = ["ContinuitySaver", "ContinuityStore"]
