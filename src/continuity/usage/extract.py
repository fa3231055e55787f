"""Where each harness records token usage, read from a session file's raw lines (issue 44
item 1). ``UsageReader`` takes the lines of one file at a time (``read(lines)``) and yields one
``MessageUsage`` per assistant message (per model response), de-duplicated across every file
it reads, as each harness requires:

- **Claude Code**: ``message.usage`` of a line with a ``timestamp`` (``input_tokens``,
  ``output_tokens``, ``cache_creation_input_tokens``, ``cache_read_input_tokens``;
  ``output_tokens_details.thinking_tokens`` as reasoning). Claude Code writes a streamed
  message as several lines, each repeating the message's usage: as ccusage 18 does, the first
  line of each ``message.id`` + ``requestId`` pair counts and the rest are skipped (a line
  lacking either id always counts). A line's own ``costUSD`` (older versions) is its cost,
  as ccusage's default ``auto`` mode takes it.
- **Codex**: ``event_msg`` records of type ``token_count``. ``info.total_token_usage`` is
  the session's running total, written again unchanged after some events: a message's usage
  is the growth of that total since the previous record (a record that adds nothing is
  skipped; a total that went down, after a resume, counts ``last_token_usage`` instead).
  OpenAI counts cached input inside ``input_tokens`` and reasoning inside ``output_tokens``:
  input here is ``input_tokens - cached_input_tokens``, cache read ``cached_input_tokens``,
  cache write ``cache_write_input_tokens`` (0.169+). The model is the last ``turn_context``'s
  ``model``. A forked or resumed file that repeats its parent's records (same time, same
  total) counts them once.
- **pi**: ``message.usage`` of an assistant ``message`` entry (``input``, ``output``,
  ``cacheRead``, ``cacheWrite``), its model ``message.model``; an entry seen before (same
  ``id``, times and ``responseId``: a branch copied into another file) counts once.
- **OpenCode** (the mirror lines ``formats.opencode`` writes): the ``tokens`` of an assistant
  ``opencode.message`` line's record (``message.data``, as OpenCode stored it: ``input``,
  ``output``, ``reasoning``, ``cache.read``, ``cache.write``); the mirror appends a message
  again when OpenCode updates it, so the last copy of each message id counts. Its output
  excludes reasoning; here output includes it, as for every harness. Kilo's sessions (OpenCode's
  layout, mirrored the same way) are read by the same rule.
- **Gemini CLI**: the ``tokens`` of a ``gemini`` message record (``input``, ``output``,
  ``cached``, ``thoughts``, ``tool``, ``total``: Gemini CLI's copy of the Gemini API's
  ``usageMetadata``), its model ``model``. Gemini CLI writes a message again under its id when
  it changes, and a resume's ``{"$set": {"messages": [...]}}`` repeats every message: the first
  copy of each message id counts, across files. A legacy one-document chat (``.json``, before
  0.39.0) is kept as parts (``formats.document``): a part holding a message is read up to the
  message's end (its ``,`` and the document's closing lines after it are not JSON of their
  own), and a metadata record holding its ``messages`` (a legacy chat on one line) counts
  each; the ``.jsonl`` Gemini CLI migrates it to repeats those ids, which count once.
- **Qwen Code**: ``usageMetadata`` of an ``assistant`` record (``promptTokenCount``,
  ``candidatesTokenCount``, ``cachedContentTokenCount``, ``thoughtsTokenCount``,
  ``totalTokenCount``), its model ``model``; a record ``uuid`` seen before counts once.
- **Copilot CLI**: ``data.usage`` of a ``session.usage_record`` event (one per model call:
  ``model``, ``inputTokens``, ``outputTokens``, ``cacheReadTokens``, ``cacheWriteTokens``),
  keyed by ``accounting.usageId`` (else ``apiCallId``, else the event id) to count once. Its
  ``inputTokens`` is the whole prompt, cache included (as AgentsView's parser reads it; the
  recorded fixtures have no cache to tell): input here is ``inputTokens - cacheReadTokens -
  cacheWriteTokens``. Its ``cost`` is premium requests, not dollars: not used. The
  ``session.shutdown`` totals repeat the records' sums and are not read.

Gemini CLI's and Qwen Code's counts follow the Gemini API: the prompt count includes the
cached part (input here is prompt minus cached, plus Gemini's ``tool`` prompt tokens); the
Gemini API counts thoughts outside ``candidates`` (its total is prompt + tool + candidates +
thoughts), Qwen's OpenAI converter inside them (its total is prompt + completion): the thoughts
are added to the output only when the recorded total says they are outside it.

Factory Droid's session file records no usage (only its ``.settings.json`` beside it holds
the session's running total, not per response and not imported), and Cursor's agent
transcripts hold none: ``usage`` shows no tokens for them (the registry's ``usage_note``).

Every count is an integer of tokens, 0 when absent or not a non-negative integer. Lines that
are not JSON objects, or carry no usage, are skipped: the importer reports bad lines. Other
harnesses record no usage and yield nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import orjson

from continuity.core.when import usable_time

#: The harnesses whose files record usage (``UsageReader`` reads these; others yield nothing).
USAGE_HARNESSES = (
    "claude-code",
    "codex",
    "pi",
    "opencode",
    "gemini-cli",
    "qwen-code",
    "copilot-cli",
    "kilo",
)

_DECODER = json.JSONDecoder()

_NEEDLES = {
    "claude-code": (b'"usage"',),
    "codex": (b'"token_count"', b'"turn_context"'),
    "pi": (b'"usage"',),
    "opencode": (b'"opencode.message"',),
    "kilo": (b'"opencode.message"',),
    "gemini-cli": (b'"tokens"',),
    "qwen-code": (b'"usageMetadata"',),
    "copilot-cli": (b'"session.usage_record"',),
}


@dataclass(frozen=True, slots=True)
class MessageUsage:
    """One model response's token usage: ``at`` (aware UTC), the ``harness``, stored
    ``session_key`` and ``project`` (folder, None when unknown), ``model`` as recorded (None
    when the file names none), and token counts: ``input_tokens`` (not read from or written to
    the prompt cache), ``output_tokens`` (reasoning included), ``cache_creation_tokens``
    (written to the cache), ``cache_read_tokens``, ``reasoning_tokens`` (the part of the
    output the harness reports as reasoning). ``cost_usd``: the harness's own cost when it is
    the one to use (Claude Code's ``costUSD``), else None (priced later)."""

    at: datetime
    harness: str
    session_key: str
    project: str | None
    model: str | None
    input_tokens: int
    output_tokens: int
    cache_creation_tokens: int
    cache_read_tokens: int
    reasoning_tokens: int
    cost_usd: float | None = None


#: Claude Code's model name for a message it wrote itself (an interruption, "No response
#: requested."), with all-zero usage: not a model response, so not counted or listed, as
#: ccusage leaves it out (fresh-user review of issue 44, item 3). One with tokens (never seen)
#: would be counted.
SYNTHETIC_MODEL = "<synthetic>"


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _name(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


_ISO = re.compile(r"\d{4}-\d{2}-\d{2}T")


def _time(value: Any) -> datetime | None:
    """An ISO 8601 string or epoch milliseconds as aware UTC, else None."""
    if isinstance(value, str) and _ISO.match(value):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return usable_time(parsed)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        try:
            return usable_time(datetime.fromtimestamp(value / 1000, UTC))
        except (OverflowError, OSError, ValueError):
            return None
    return None


class UsageReader:
    """Reads the usage of many files of a workspace, de-duplicating across them (module
    docstring). Feed each file's lines in the order the files should count (ccusage: by their
    earliest time) with ``read``."""

    def __init__(self) -> None:
        self._seen: set[Any] = set()

    def read(
        self, harness: str, session_key: str, project: str | None, lines: Iterable[bytes]
    ) -> Iterator[MessageUsage]:
        """The usage records of one file of ``harness`` (its raw ``lines``, without their
        newline) stored as session ``session_key`` of folder ``project``."""
        needles = _NEEDLES.get(harness)
        if needles is None:
            return iter(())
        records = (_parse(line) for line in lines if any(n in line for n in needles))
        found = (r for r in records if r is not None)
        base = MessageUsage(
            datetime.min.replace(tzinfo=UTC), harness, session_key, project, None, 0, 0, 0, 0, 0
        )
        if harness == "claude-code":
            return self._claude(found, base)
        if harness == "codex":
            return self._codex(found, base)
        if harness == "pi":
            return self._pi(found, base)
        if harness == "gemini-cli":
            return self._gemini(found, base)
        if harness == "qwen-code":
            return self._qwen(found, base)
        if harness == "copilot-cli":
            return self._copilot(found, base)
        return self._opencode(found, base)

    def _claude(
        self, records: Iterable[dict[str, Any]], base: MessageUsage
    ) -> Iterator[MessageUsage]:
        for record in records:
            message = _obj(record.get("message"))
            usage = message.get("usage")
            at = _time(record.get("timestamp"))
            if not isinstance(usage, dict) or at is None:
                continue
            msg_id, request_id = _name(message.get("id")), _name(record.get("requestId"))
            if msg_id and request_id:
                key = ("claude-code", msg_id, request_id)
                if key in self._seen:
                    continue
                self._seen.add(key)
            cost = record.get("costUSD")
            found = replace(
                base,
                at=at,
                model=_name(message.get("model")),
                input_tokens=_count(usage.get("input_tokens")),
                output_tokens=_count(usage.get("output_tokens")),
                cache_creation_tokens=_count(usage.get("cache_creation_input_tokens")),
                cache_read_tokens=_count(usage.get("cache_read_input_tokens")),
                reasoning_tokens=_count(
                    _obj(usage.get("output_tokens_details")).get("thinking_tokens")
                ),
                cost_usd=float(cost)
                if isinstance(cost, (int, float)) and not isinstance(cost, bool)
                else None,
            )
            if found.model == SYNTHETIC_MODEL and not (
                found.input_tokens
                or found.output_tokens
                or found.cache_creation_tokens
                or found.cache_read_tokens
            ):
                continue  # not a model response (ccusage leaves it out too)
            yield found

    def _codex(
        self, records: Iterable[dict[str, Any]], base: MessageUsage
    ) -> Iterator[MessageUsage]:
        model: str | None = None
        previous: dict[str, int] | None = None
        for record in records:
            kind = record.get("type")
            payload = _obj(record.get("payload"))
            if kind == "turn_context":
                model = _name(payload.get("model")) or model
                continue
            if kind != "event_msg" or payload.get("type") != "token_count":
                continue
            info = _obj(payload.get("info"))
            at = _time(record.get("timestamp"))
            total = _codex_counts(info.get("total_token_usage"))
            last = _codex_counts(info.get("last_token_usage"))
            if at is None or (total is None and last is None):
                continue
            if total is None:
                used = last
            elif previous is None:
                used = total
            elif any(total[k] < previous[k] for k in total):
                used = last  # the running total restarted (a resumed session)
            else:
                used = {k: total[k] - previous[k] for k in total}
            if total is not None:
                previous = total
            if used is None or not any(used.values()):
                continue
            key = ("codex", record.get("timestamp"), tuple(sorted((total or used).items())))
            if key in self._seen:
                continue
            self._seen.add(key)
            yield replace(
                base,
                at=at,
                model=model,
                input_tokens=max(used["input"] - used["cached"], 0),
                output_tokens=used["output"],
                cache_creation_tokens=used["write"],
                cache_read_tokens=used["cached"],
                reasoning_tokens=used["reasoning"],
            )

    def _pi(self, records: Iterable[dict[str, Any]], base: MessageUsage) -> Iterator[MessageUsage]:
        for record in records:
            message = _obj(record.get("message"))
            usage = message.get("usage")
            if record.get("type") != "message" or message.get("role") != "assistant":
                continue
            if not isinstance(usage, dict):
                continue
            at = _time(record.get("timestamp")) or _time(message.get("timestamp"))
            if at is None:
                continue
            # pi's entry ids are 8 hex digits: unique in a session, not across thousands of
            # them; with the entry's and the message's times they name one response
            key = (
                "pi",
                _name(record.get("id")),
                record.get("timestamp"),
                message.get("timestamp"),
                _name(message.get("responseId")),
            )
            if key in self._seen:
                continue
            self._seen.add(key)
            yield replace(
                base,
                at=at,
                model=_name(message.get("model")),
                input_tokens=_count(usage.get("input")),
                output_tokens=_count(usage.get("output")),
                cache_creation_tokens=_count(usage.get("cacheWrite")),
                cache_read_tokens=_count(usage.get("cacheRead")),
                reasoning_tokens=0,
            )

    def _opencode(
        self, records: Iterable[dict[str, Any]], base: MessageUsage
    ) -> Iterator[MessageUsage]:
        last: dict[str, MessageUsage] = {}
        for record in records:
            head = _obj(record.get("message"))
            message = _obj(head.get("data"))  # the record as OpenCode stored it
            tokens = message.get("tokens")
            if record.get("type") != "opencode.message" or message.get("role") != "assistant":
                continue
            msg_id = _name(message.get("id")) or _name(head.get("id"))
            times = _obj(message.get("time"))
            at = _time(times.get("created")) or _time(times.get("completed"))
            if msg_id is None or not isinstance(tokens, dict) or at is None:
                continue
            cache = _obj(tokens.get("cache"))
            reasoning = _count(tokens.get("reasoning"))
            last[msg_id] = replace(
                base,
                at=at,
                model=_name(message.get("modelID")),
                input_tokens=_count(tokens.get("input")),
                output_tokens=_count(tokens.get("output")) + reasoning,
                cache_creation_tokens=_count(cache.get("write")),
                cache_read_tokens=_count(cache.get("read")),
                reasoning_tokens=reasoning,
            )
        for msg_id, usage in last.items():
            key = ("opencode", msg_id)
            if key not in self._seen:
                self._seen.add(key)
                yield usage

    def _gemini(
        self, records: Iterable[dict[str, Any]], base: MessageUsage
    ) -> Iterator[MessageUsage]:
        for record in records:
            update = _obj(record.get("$set")).get("messages")
            if not isinstance(update, list) and "sessionId" in record:
                update = record.get("messages")  # a legacy chat on one line
            messages = update if isinstance(update, list) else [record]
            for message in messages:
                found = self._gemini_message(_obj(message), base)
                if found is not None:
                    yield found

    def _gemini_message(self, message: dict[str, Any], base: MessageUsage) -> MessageUsage | None:
        tokens = message.get("tokens")
        msg_id = _name(message.get("id"))
        at = _time(message.get("timestamp"))
        if message.get("type") != "gemini" or not isinstance(tokens, dict):
            return None
        if msg_id is None or at is None or ("gemini-cli", msg_id) in self._seen:
            return None
        self._seen.add(("gemini-cli", msg_id))
        return _gemini_api(
            replace(base, at=at, model=_name(message.get("model"))),
            prompt=_count(tokens.get("input")) + _count(tokens.get("tool")),
            cached=_count(tokens.get("cached")),
            candidates=_count(tokens.get("output")),
            thoughts=_count(tokens.get("thoughts")),
            total=_count(tokens.get("total")),
        )

    def _qwen(
        self, records: Iterable[dict[str, Any]], base: MessageUsage
    ) -> Iterator[MessageUsage]:
        for record in records:
            meta = record.get("usageMetadata")
            uuid = _name(record.get("uuid"))
            at = _time(record.get("timestamp"))
            if record.get("type") != "assistant" or not isinstance(meta, dict):
                continue
            if uuid is None or at is None or ("qwen-code", uuid) in self._seen:
                continue
            self._seen.add(("qwen-code", uuid))
            yield _gemini_api(
                replace(base, at=at, model=_name(record.get("model"))),
                prompt=_count(meta.get("promptTokenCount")),
                cached=_count(meta.get("cachedContentTokenCount")),
                candidates=_count(meta.get("candidatesTokenCount")),
                thoughts=_count(meta.get("thoughtsTokenCount")),
                total=_count(meta.get("totalTokenCount")),
            )

    def _copilot(
        self, records: Iterable[dict[str, Any]], base: MessageUsage
    ) -> Iterator[MessageUsage]:
        for record in records:
            usage = _obj(record.get("data")).get("usage")
            at = _time(record.get("timestamp"))
            if record.get("type") != "session.usage_record" or not isinstance(usage, dict):
                continue
            call = (
                _name(_obj(usage.get("accounting")).get("usageId"))
                or _name(usage.get("apiCallId"))
                or _name(record.get("id"))
            )
            if call is None or at is None or ("copilot-cli", call) in self._seen:
                continue
            self._seen.add(("copilot-cli", call))
            read = _count(usage.get("cacheReadTokens"))
            write = _count(usage.get("cacheWriteTokens"))
            yield replace(
                base,
                at=at,
                model=_name(usage.get("model")),
                input_tokens=max(_count(usage.get("inputTokens")) - read - write, 0),
                output_tokens=_count(usage.get("outputTokens")),
                cache_creation_tokens=write,
                cache_read_tokens=read,
                reasoning_tokens=0,
            )


def _gemini_api(
    base: MessageUsage, *, prompt: int, cached: int, candidates: int, thoughts: int, total: int
) -> MessageUsage:
    """A Gemini API usage (Gemini CLI's ``tokens``, Qwen Code's ``usageMetadata``) as a
    ``MessageUsage`` (module docstring: cached out of input; thoughts added to the output only
    when ``total`` counts them apart from ``candidates``)."""
    outside = thoughts > 0 and total >= prompt + candidates + thoughts
    return replace(
        base,
        input_tokens=max(prompt - cached, 0),
        output_tokens=candidates + thoughts if outside else candidates,
        cache_creation_tokens=0,
        cache_read_tokens=cached,
        reasoning_tokens=thoughts,
    )


def _codex_counts(value: Any) -> dict[str, int] | None:
    if not isinstance(value, dict):
        return None
    return {
        "input": _count(value.get("input_tokens")),
        "cached": _count(value.get("cached_input_tokens")),
        "write": _count(value.get("cache_write_input_tokens")),
        "output": _count(value.get("output_tokens")),
        "reasoning": _count(value.get("reasoning_output_tokens")),
    }


def _parse(line: bytes) -> dict[str, Any] | None:
    """The JSON object of a raw line, else None. A line holding line feeds is a part of a
    one-document file (``formats.document``: a message, then its ``,`` or the document's
    end): its first value is read."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        if b"\n" not in line:
            return None
        try:
            value, _ = _DECODER.raw_decode(line.decode("utf-8").lstrip())
        except (UnicodeDecodeError, ValueError, RecursionError):
            return None
    return value if isinstance(value, dict) else None
