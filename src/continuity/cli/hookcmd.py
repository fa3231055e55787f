"""``continuity hook EVENT --harness HARNESS`` (claude-code, codex, pi, gemini-cli, qwen-code,
copilot-cli): the command a harness runs per hook.

It reads the hook's JSON from stdin, forwards it unchanged to the daemon
(``POST /api/harness/<harness>/<event>``, where the daemon's adapters map it), prints the
daemon's answer (the exact stdout the harness expects, e.g. Claude Code's
``hookSpecificOutput.additionalContext``) and exits 0.

It never blocks or fails the agent (B62). **One deadline** covers the whole hook, reading stdin,
the post and the spool (``TIMEOUTS`` per event, or ``--timeout``, or ``CONTINUITY_HOOK_TIMEOUT``
seconds; issue 16): stdin and the post get the deadline less ``spool_reserve`` (a quarter, at
most 0.25 s; a stdin left open at most half of that), the spool the rest (its lock waited for
until the deadline), and the console entry (``main``) arms a timer that ends the process with
status 0 at the deadline whatever still runs (a spool write under way finishes first, so no
half line is ever left). When the daemon is down, slow, not this workspace's, or answers with
a server error, the event is appended durably to ``<home>/spool/events.jsonl``
(``continuity.daemon.hooks.spool``) for the daemon to replay when it starts. An event that cannot
be delivered ever is not spooled but recorded whole in
``<home>/spool/rejected.jsonl`` with its reason and one line on stderr (issues 16, 22: reported,
never dropped without a word, never truncated): a request the daemon rejects as bad input (HTTP
400/404/413/422), a payload over ``MAX_PAYLOAD`` (32 MiB; refused whole, its size noted, no
cut copy kept), a stdin still open at the deadline with no complete JSON object read.
``CONTINUITY_NO_HOOKS=1`` makes it exit at once (a recursion guard). ``pre-tool-use`` only asks
(issue 40: recall before a tool runs; ``QUERY_EVENTS``): its answer is printed when the daemon
gives one in time, and nothing is spooled or recorded when it does not.

**Only the workspace's own daemon** (issue 12): the address is ``$CONTINUITY_DAEMON_URL``, else
the ``<home>/daemon.url`` file the running daemon writes; with neither, no daemon of this
workspace runs and the event is spooled at once (no default address is ever tried). Found in
``daemon.url``, the request names the daemon's id (``<home>/daemon.id``,
``X-Continuity-Workspace``) and carries the workspace's token (``$CONTINUITY_DAEMON__TOKEN``,
else ``[daemon] token`` of ``config.toml``, else ``<home>/daemon.token``): a daemon of another
workspace answers 421 or 401, and the event is spooled here, never delivered there.

Fast by construction: it imports only ``_socket``, ``_signal``, ``select``, ``fcntl`` and
``binascii`` (C modules) beyond what Python loads at startup, not ``urllib`` (about 30 ms of
imports, three times a bare start), ``json``, pydantic or the CLI (``json`` only to record a
rejected event). Plain HTTP only: the hook talks to a local daemon.

Over 600 lines: the hook's fast path must load as few modules as possible (a harness waits on it
at every event): forwarding, spooling and the replay fallback stay in this one module, importing
only the standard library.
"""

from __future__ import annotations

import os
import sys
import time

from continuity.cli.client import daemon_headers, post
from continuity.daemon.address import daemon_address

#: Seconds the whole exchange may take, per event (Claude Code gives SessionEnd 1.5 s in all).
TIMEOUTS = {
    "session-start": 5.0,
    "user-prompt-submit": 3.0,
    "pre-compaction": 5.0,
    "post-compaction": 3.0,
    "stop": 3.0,
    "session-end": 1.0,
    "pre-tool-use": 2.0,
}
#: A native event name, as harnesses spell it, for each of ours.
NATIVE = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "user-prompt-submit",
    "PreCompact": "pre-compaction",
    "PostCompact": "post-compaction",
    "Stop": "stop",
    "SessionEnd": "session-end",
    "PreToolUse": "pre-tool-use",
}
#: Events that only ask (issue 40: recall before a tool runs): posted like the others, their
#: answer printed, but never spooled nor recorded as rejected when no daemon answers (nothing
#: happened that the record would miss; an answer later would reach nobody).
QUERY_EVENTS = ("pre-tool-use",)
#: Requests a harness waits on for their answer, never spooled (issue 14: pi's extension asks
#: for its continuation checkpoint's summary, or reports one it refused): event → route. When
#: the daemon is down or does not answer, the command prints ``{"delivered": false, "why"}``
#: (an HTTP error: also ``"status"``) and the caller fails closed.
SYNC_ROUTES = {
    "continuation-summary": "/api/continuation/summary",
    "continuation-refused": "/api/continuation/refused",
}
#: Answers meaning "this request is bad": spooling it would only fail again.
REJECTED = (400, 404, 413, 422)
#: Answers meaning "this daemon is not the workspace's" (another workspace's token or id, a
#: Host or Origin it does not serve): the event waits in this workspace's spool.
NOT_OURS = (401, 403, 421)
#: The largest hook stdin taken (bytes); a larger one is refused whole (issue 16).
MAX_PAYLOAD = 32 * 1024 * 1024
#: The longest deadline a hook takes (seconds): a bigger or non-finite ``--timeout`` is cut.
MAX_SECONDS = 600.0
USAGE = (
    "usage: continuity hook EVENT --harness HARNESS [--home DIR] [--timeout S]\n"
    "HARNESS: claude-code, codex, pi, gemini-cli, qwen-code or copilot-cli.\n"
    "EVENT: session-start, user-prompt-submit, pre-compaction, post-compaction, stop,\n"
    "session-end, pre-tool-use (or SessionStart, UserPromptSubmit, PreCompact,\n"
    "PostCompact, Stop, SessionEnd, PreToolUse). Reads the hook JSON on stdin; always\n"
    "exits 0.\n"
)


def _note(message: str) -> None:
    try:  # noqa: SIM105 - contextlib stays off the hook's start path (its start time counts)
        sys.stderr.write(f"continuity hook: {message}\n")
    except Exception:  # noqa: BLE001 - stderr closed: nothing to tell
        pass


def take_home(argv: list[str]) -> tuple[list[str], str | None]:
    """``argv`` without its ``--home DIR`` (or ``--home=DIR``), and that folder (None when not
    given: ``$CONTINUITY_HOME``, else the platform's folder). The same workspace option as
    every other command's. Raises ``ValueError`` for a ``--home`` without a value."""
    rest, home = [], None
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--home":
            if not args:
                raise ValueError("--home needs a folder")
            home = args.pop(0)
        elif arg.startswith("--home="):
            home = arg.split("=", 1)[1]
        else:
            rest.append(arg)
    return rest, home


def parse_args(argv: list[str]) -> tuple[str, str, float | None]:
    """``(event, harness, timeout)`` from ``[hook] EVENT --harness H [--timeout S]``.
    Raises ``ValueError`` with the usage problem."""
    args = list(argv)
    if args and args[0] == "hook":
        args = args[1:]
    event = harness = None
    timeout: float | None = None
    while args:
        arg = args.pop(0)
        if arg in ("--harness", "-H", "--timeout") and args:
            value = args.pop(0)
        elif arg.startswith(("--harness=", "--timeout=")):
            arg, value = arg.split("=", 1)
        elif not arg.startswith("-") and event is None:
            event = NATIVE.get(arg, arg)
            continue
        else:
            raise ValueError(f"unexpected argument {arg!r}")
        if arg in ("--harness", "-H"):
            harness = value
        else:
            timeout = float(value)
    from continuity.daemon.hooks.spool import EVENTS, HARNESSES

    if event not in EVENTS and event not in SYNC_ROUTES and event not in QUERY_EVENTS:
        raise ValueError(f"EVENT must be one of {', '.join(EVENTS + QUERY_EVENTS)} (got {event!r})")
    if harness not in HARNESSES:
        raise ValueError(f"--harness must be one of {', '.join(HARNESSES)} (got {harness!r})")
    return event, harness, timeout


def spool_reserve(seconds: float) -> float:
    """The part of a ``seconds`` deadline kept for the spool write: a quarter, at most 0.25 s."""
    return min(0.25, seconds / 4)


def _read_stdin(deadline: float) -> tuple[bytes, str | None]:
    """The hook's stdin, read until it closes or ``deadline`` (``time.monotonic()``):
    ``(payload, problem)``. ``problem`` is None for a whole payload; ``"too_large"`` past
    ``MAX_PAYLOAD`` bytes (reading stops there; the payload is then empty, never a cut copy);
    ``"open"`` when stdin did not close by the deadline and what was read is not a whole JSON
    object (a harness that keeps stdin open after writing one ``{...}`` is served). A terminal
    or no stdin reads as ``{}``."""
    import select

    stdin = sys.stdin
    try:
        if stdin is None or stdin.isatty():
            return b"{}", None
        fd = stdin.fileno()
    except (OSError, ValueError):
        return b"{}", None
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    chunks: list[bytes] = []
    size = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            data = b"".join(chunks)
            whole = data.strip().startswith(b"{") and data.strip().endswith(b"}")
            return (data, None) if whole else (data, "open")
        if not poller.poll(max(1, int(left * 1000))):
            continue
        try:
            chunk = os.read(fd, 1 << 20)
        except OSError:  # a broken stdin ends it
            chunk = b""
        if not chunk:
            return b"".join(chunks), None
        size += len(chunk)
        if size > MAX_PAYLOAD:
            return b"", "too_large"
        chunks.append(chunk)


class _Backstop:
    """The hook's hard deadline (``main``): a ``SIGALRM`` at ``seconds`` that notes it and ends
    the process with status 0, whatever still runs (a hung disk, a lock held forever).
    ``hold()``/``release()`` keep it off a spool write in progress (a half line would spoil
    the next one). Uses ``_signal``: ``signal`` imports ``enum``."""

    def __init__(self) -> None:
        self.armed = False

    def arm(self, seconds: float) -> None:
        import _signal  # pyright: ignore[reportMissingImports] - no stub; signal imports enum

        def expire(_signum: int, _frame: object) -> None:
            _note(f"the hook's deadline ({seconds:g} s) passed; exiting")
            os._exit(0)

        _signal.signal(_signal.SIGALRM, expire)
        _signal.setitimer(_signal.ITIMER_REAL, seconds)
        self.armed = True

    def disarm(self) -> None:
        if self.armed:
            import _signal  # pyright: ignore[reportMissingImports] - no stub; signal imports enum

            _signal.setitimer(_signal.ITIMER_REAL, 0)
            self.armed = False

    def hold(self) -> None:
        if self.armed:
            import _signal  # pyright: ignore[reportMissingImports] - no stub; signal imports enum

            _signal.pthread_sigmask(_signal.SIG_BLOCK, {_signal.SIGALRM})

    def release(self) -> None:
        if self.armed:
            import _signal  # pyright: ignore[reportMissingImports] - no stub; signal imports enum

            _signal.pthread_sigmask(_signal.SIG_UNBLOCK, {_signal.SIGALRM})


_BACKSTOP = _Backstop()


def _spool(home: str, line: bytes, event: str, why: str, deadline: float) -> None:
    from continuity.daemon.hooks.spool import append

    _BACKSTOP.hold()
    try:
        append(home, line, lock_deadline=deadline)
        _note(f"daemon unavailable ({why}); {event} spooled for replay")
    except Exception as exc:  # noqa: BLE001 - never fail the agent, even with a full disk
        _note(f"daemon unavailable ({why}) and the spool failed too: {exc}")
    finally:
        _BACKSTOP.release()


def _reject(
    home: str, line: bytes | None, event: str, reason: str, payload_bytes: int | None = None
) -> None:
    """Record a refused event in the spool's rejected log, and say so on stderr."""
    from continuity.daemon.hooks.spool import REJECTED_FILE, SPOOL_DIR, reject_event

    _BACKSTOP.hold()
    try:
        reject_event(home, line, reason, payload_bytes=payload_bytes)
        _note(
            f"{event} event refused: {reason} (recorded in "
            f"{os.path.join(home, SPOOL_DIR, REJECTED_FILE)})"
        )
    except Exception as exc:  # noqa: BLE001 - never fail the agent
        _note(f"{event} event refused: {reason}; recording it failed too: {exc}")
    finally:
        _BACKSTOP.release()


def hook_seconds(event: str, timeout: float | None) -> float:
    """The hook's one deadline in seconds: ``--timeout``, else ``$CONTINUITY_HOOK_TIMEOUT``,
    else ``TIMEOUTS[event]``; a value that is not a positive finite number is ignored, and
    none exceeds ``MAX_SECONDS``."""
    for value in (timeout, os.environ.get("CONTINUITY_HOOK_TIMEOUT")):
        try:
            seconds = float(value) if value is not None and value != "" else None
        except ValueError:
            seconds = None
        if seconds is not None and 0 < seconds < float("inf"):
            return min(seconds, MAX_SECONDS)
    return TIMEOUTS.get(event, SYNC_SECONDS)


#: The default deadline of a ``SYNC_ROUTES`` request (the daemon bounds a summary by
#: ``[daemon] stop_seconds`` itself; the caller passes ``--timeout``).
SYNC_SECONDS = 130.0


def run(argv: list[str], *, backstop: bool = False) -> int:
    """Do the hook (module docstring); returns the exit status, which is always 0.
    ``backstop``: arm the process-ending timer at the deadline (the console entry does; a
    caller in-process does not)."""
    started = time.monotonic()
    if os.environ.get("CONTINUITY_NO_HOOKS") == "1":
        return 0
    if any(a in ("-h", "--help") for a in argv):
        sys.stdout.write(USAGE)
        return 0
    if "--version" in argv:  # issue 20: as every command (imported only when asked)
        from continuity.core.version import package_version

        sys.stdout.write(f"continuity {package_version()}\n")
        return 0
    try:
        argv, home_arg = take_home(argv)
        event, harness, timeout = parse_args(argv)
    except ValueError as exc:
        _note(f"{exc}\n{USAGE}")
        return 0
    seconds = hook_seconds(event, timeout)
    if backstop:
        _BACKSTOP.arm(seconds)
    try:
        return _run(home_arg, event, harness, started + seconds, seconds)
    finally:
        _BACKSTOP.disarm()


def _run(home_arg: str | None, event: str, harness: str, deadline: float, seconds: float) -> int:
    from continuity.daemon.hooks.spool import fast_home, iso_now, native_line, new_event_id

    home = os.path.expanduser(home_arg) if home_arg else fast_home()
    if event in SYNC_ROUTES:
        return _run_sync(home, event, deadline)
    if event in QUERY_EVENTS:
        return _run_query(home, event, harness, deadline)
    event_id, at = new_event_id(), iso_now()
    work_deadline = deadline - spool_reserve(seconds)
    # stdin closes at once when a harness is done writing; one left open may hold the rest of
    # the work time only up to half of it, so the post keeps the other half
    payload, problem = _read_stdin(work_deadline - (work_deadline - time.monotonic()) / 2)
    if problem == "too_large":
        _reject(
            home,
            None,
            event,
            f"payload over {MAX_PAYLOAD} bytes (32 MiB): refused whole "
            "at the hook, not sent, not spooled",
            payload_bytes=MAX_PAYLOAD + 1,
        )
        return 0
    line = native_line(event_id, at, harness, event, payload)
    if problem == "open":
        _reject(
            home,
            line,
            event,
            f"stdin did not close in time (the hook's deadline: "
            f"{seconds:g} s) and holds no whole JSON object ({len(payload)} bytes read)",
        )
        return 0
    try:
        address = daemon_address(home)
        if address is None:
            _spool(home, line, event, "no daemon of this workspace runs (no daemon.url)", deadline)
            return 0
        host, port = address
        headers = {
            "X-Continuity-Event-Id": event_id,
            "X-Continuity-Event-At": at,
            **daemon_headers(home),
        }
        status, answer = post(
            host, port, f"/api/harness/{harness}/{event}", payload, headers, work_deadline
        )
    except Exception as exc:  # noqa: BLE001 - down, slow, refused or broken: spool, exit 0
        _spool(home, line, event, f"{exc.__class__.__name__}: {exc}", deadline)
        return 0
    if 200 <= status < 300:
        if answer:
            try:
                sys.stdout.buffer.write(answer)
                sys.stdout.flush()
            except Exception:  # noqa: BLE001 - the harness closed our stdout
                pass
        return 0
    if status in REJECTED:
        _reject(
            home,
            line,
            event,
            f"the daemon rejected it (HTTP {status}): {answer[:300].decode('utf-8', 'replace')}",
        )
        return 0
    if status in NOT_OURS:
        _spool(
            home,
            line,
            event,
            f"the daemon at {host}:{port} is not this workspace's (HTTP {status})",
            deadline,
        )
        return 0
    _spool(home, line, event, f"HTTP {status}", deadline)
    return 0


def _run_query(home: str, event: str, harness: str, deadline: float) -> int:
    """A ``QUERY_EVENTS`` hook: stdin posted to the daemon, its 2xx answer printed; anything
    else (no daemon, a timeout, an error) prints nothing, spools nothing, and the tool runs
    as it would without us. Bad input (stdin over ``MAX_PAYLOAD`` or never closed, or a
    ``REJECTED`` answer such as 400 for JSON that does not parse) is recorded in the
    rejected log as every other hook's is (issue 45: it was dropped without a line)."""
    from continuity.daemon.hooks.spool import iso_now, native_line, new_event_id

    payload, problem = _read_stdin(deadline - (deadline - time.monotonic()) / 2)
    if problem == "too_large":
        _reject(
            home,
            None,
            event,
            f"payload over {MAX_PAYLOAD} bytes (32 MiB): refused whole at the hook, not sent",
            payload_bytes=MAX_PAYLOAD + 1,
        )
        return 0
    if problem is not None:
        _reject(
            home,
            native_line(new_event_id(), iso_now(), harness, event, payload),
            event,
            f"stdin did not close in time and holds no whole JSON object "
            f"({len(payload)} bytes read)",
        )
        return 0
    try:
        address = daemon_address(home)
        if address is None:
            return 0
        host, port = address
        status, answer = post(
            host, port, f"/api/harness/{harness}/{event}", payload, daemon_headers(home), deadline
        )
    except Exception:  # noqa: BLE001 - a question unanswered: the tool runs without it
        return 0
    if 200 <= status < 300 and answer:
        _answer_sync(answer)
    elif status in REJECTED:
        _reject(
            home,
            native_line(new_event_id(), iso_now(), harness, event, payload),
            event,
            f"the daemon rejected it (HTTP {status}): {answer[:300].decode('utf-8', 'replace')}",
        )
    return 0


def _answer_sync(value: bytes) -> None:
    try:
        sys.stdout.buffer.write(value)
        sys.stdout.flush()
    except Exception:  # noqa: BLE001 - the caller closed our stdout
        pass


def _run_sync(home: str, event: str, deadline: float) -> int:
    """A ``SYNC_ROUTES`` request: stdin posted as it is, the daemon's 2xx answer printed;
    anything else printed as ``{"delivered": false, ...}``. Never spooled."""
    payload, problem = _read_stdin(deadline - (deadline - time.monotonic()) / 2)
    if problem is not None:
        _answer_sync(b'{"delivered":false,"why":"stdin"}')
        return 0
    try:
        address = daemon_address(home)
        if address is None:
            _spool_refusal(home, event, payload, deadline)
            _answer_sync(b'{"delivered":false,"why":"no_daemon"}')
            return 0
        host, port = address
        status, answer = post(
            host, port, SYNC_ROUTES[event], payload, daemon_headers(home), deadline
        )
    except TimeoutError:
        _answer_sync(b'{"delivered":false,"why":"timeout"}')
        return 0
    except Exception:  # noqa: BLE001 - down or broken: the caller fails closed
        _spool_refusal(home, event, payload, deadline)
        _answer_sync(b'{"delivered":false,"why":"unreachable"}')
        return 0
    if 200 <= status < 300 and answer:
        _answer_sync(answer)
    else:
        if status >= 500 or status in NOT_OURS:
            _spool_refusal(home, event, payload, deadline)
        elif status in REJECTED:  # bad input: recorded as every hook's is (issue 45)
            _reject_body(home, event, payload, status, answer)
        _answer_sync(b'{"delivered":false,"why":"http","status":%d}' % status)
    return 0


def _reject_body(home: str, event: str, payload: bytes, status: int, answer: bytes) -> None:
    """A ``SYNC_ROUTES`` request the daemon refused as bad input: recorded in the rejected
    log (issue 45: every hook route records bad input the same way), as a body line when the
    payload is a JSON object, else with its size only (it cannot be a body line)."""
    import json

    from continuity.daemon.hooks.spool import body_line, iso_now, new_event_id

    reason = f"the daemon rejected it (HTTP {status}): {answer[:300].decode('utf-8', 'replace')}"
    try:
        body = json.loads(payload.decode("utf-8"))
        line = body_line(new_event_id(), iso_now(), event, body) if isinstance(body, dict) else None
    except (ValueError, UnicodeError):
        line = None
    _reject(home, line, event, reason, payload_bytes=None if line else len(payload))


def _spool_refusal(home: str, event: str, payload: bytes, deadline: float) -> None:
    """A ``continuation-refused`` report no daemon took: journaled as a body line for the
    daemon's start to record (issue 14: the receipt reaches the store even when the daemon
    was down). A summary request is never spooled (nobody would read its answer)."""
    if event != "continuation-refused":
        return
    import json

    from continuity.daemon.hooks.spool import body_line, iso_now, new_event_id

    try:
        body = json.loads(payload.decode("utf-8"))
        if not isinstance(body, dict):
            return
        line = body_line(new_event_id(), iso_now(), event, body)
    except (ValueError, UnicodeError):
        return
    _spool(home, line, event, "no daemon answered", deadline)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (``continuity-hook``); also reached from ``continuity hook``."""
    try:
        code = run(sys.argv[1:] if argv is None else argv, backstop=True)
    except BaseException:  # noqa: BLE001 - B62: a hook never fails the agent
        code = 0
    sys.exit(code)


#: The commands ``continuity.cli.fast`` may run (its ``COMMANDS``; a test holds them equal),
#: named here so any other command does not import it.
FAST_COMMANDS = frozenset({"sessions", "show", "continue", "import", "search", "recall"})


def home_after_command(argv: list[str]) -> list[str]:
    """``argv`` (after the program name) with a leading ``--home PATH`` (or ``--home=PATH``)
    moved to just after the command, where the fast path reads it: the README's ``--home``
    before the command (as ``git -C``) ran every read command through Typer, and ``search``
    without its daemon (fresh-user review: 1 s instead of 0.07 s). ``argv`` unchanged when
    it does not start so, or names ``--home`` twice."""
    if argv and argv[0] == "--home" and len(argv) >= 3:
        home, rest = argv[1], argv[2:]
    elif argv and argv[0].startswith("--home=") and len(argv) >= 2:
        home, rest = argv[0][len("--home=") :], argv[1:]
    else:
        return argv
    if any(a == "--home" or a.startswith("--home=") for a in rest):
        return argv
    return [rest[0], "--home", home, *rest[1:]]


def console() -> None:
    """A ``continuity`` console-script entry that keeps ``continuity hook ...`` fast: the hook
    runs without importing the CLI (Typer, Rich); so do the read commands it can run
    (``continuity.cli.fast``, issue 43 goal 3) and an import with nothing new (goal 4); any
    other command goes to
    ``continuity.cli.app.main``. ``watch`` binds SIGTERM and SIGINT first
    (``core.stopping.early_stop``): a signal during the CLI's start-up stops it cleanly."""
    if len(sys.argv) > 1 and sys.argv[1] == "hook":
        main(sys.argv[2:])
    if len(sys.argv) > 1 and sys.argv[1] == "watch":
        from continuity.core.stopping import early_stop

        early_stop()
    argv = home_after_command(sys.argv[1:])
    if argv and argv[0] in FAST_COMMANDS:
        from continuity.cli.fast import run

        code = run(argv)
        if code is not None:
            raise SystemExit(code)
    from continuity.cli.app import main as cli_main

    cli_main()


if __name__ == "__main__":  # pragma: no cover
    main()
