"""``continuity hook EVENT --harness claude-code|codex|pi``: the command a harness runs per hook.

It reads the hook's JSON from stdin, forwards it unchanged to the daemon
(``POST /api/harness/<harness>/<event>``, where the daemon's adapters map it), prints the
daemon's answer (the exact stdout the harness expects, e.g. Claude Code's
``hookSpecificOutput.additionalContext``) and exits 0.

It never blocks or fails the agent (B62): every network step has a deadline (``TIMEOUTS``, or
``CONTINUITY_HOOK_TIMEOUT`` seconds), and when the daemon is down, slow, or answers with a server
error, the event is appended durably to ``<home>/spool/events.jsonl`` (``continuity.daemon.hooks.spool``)
for the daemon to replay when it starts; the command still exits 0. A request the daemon rejects
as bad input (HTTP 400/404/413/422) is not spooled (it would be rejected again): one line on
stderr says why. ``CONTINUITY_NO_HOOKS=1`` makes it exit at once (a recursion guard).

Fast by construction: it imports only ``_socket``, ``fcntl`` and ``binascii`` (C modules) beyond
what Python loads at startup, not ``urllib`` (about 30 ms of imports, three times a bare start),
``json``, pydantic or the CLI. The daemon's address is ``$CONTINUITY_DAEMON_URL``, else the
``<home>/daemon.url`` file the running daemon writes, else ``http://127.0.0.1:7438``; its bearer
token ``$CONTINUITY_DAEMON__TOKEN``, else ``[daemon] token`` of ``<home>/config.toml`` (parsed
only when that file mentions a token). Plain HTTP only: the hook talks to a local daemon.
"""

from __future__ import annotations

import os
import sys
import time

from continuity.daemon.address import DEFAULT_URL, daemon_address, daemon_token

#: Seconds the whole exchange may take, per event (Claude Code gives SessionEnd 1.5 s in all).
TIMEOUTS = {"session-start": 5.0, "user-prompt-submit": 3.0, "pre-compaction": 5.0,
            "post-compaction": 3.0, "stop": 3.0, "session-end": 1.0}
#: A native event name, as harnesses spell it, for each of ours.
NATIVE = {"SessionStart": "session-start", "UserPromptSubmit": "user-prompt-submit",
          "PreCompact": "pre-compaction", "PostCompact": "post-compaction", "Stop": "stop",
          "SessionEnd": "session-end"}
#: Answers meaning "this request is bad": spooling it would only fail again.
REJECTED = (400, 404, 413, 422)
MAX_PAYLOAD = 32 * 1024 * 1024
USAGE = ("usage: continuity hook EVENT --harness claude-code|codex|pi [--home DIR] "
         "[--timeout S]\n"
         "EVENT: session-start, user-prompt-submit, pre-compaction, post-compaction, stop,\n"
         "session-end (or SessionStart, UserPromptSubmit, PreCompact, PostCompact, Stop,\n"
         "SessionEnd). Reads the hook JSON on stdin; always exits 0.\n")


def _note(message: str) -> None:
    try:
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

    if event not in EVENTS:
        raise ValueError(f"EVENT must be one of {', '.join(EVENTS)} (got {event!r})")
    if harness not in HARNESSES:
        raise ValueError(f"--harness must be one of {', '.join(HARNESSES)} (got {harness!r})")
    return event, harness, timeout


def post(host: str, port: int, path: str, body: bytes, headers: dict[str, str],
         deadline: float) -> tuple[int, bytes]:
    """One HTTP/1.1 POST over a fresh socket (``Connection: close``), all of it before
    ``deadline`` (``time.monotonic()``). Returns ``(status, body)``. Raises ``OSError`` (a
    ``TimeoutError`` past the deadline) or ``ValueError`` for a malformed answer."""
    import _socket

    family = _socket.AF_INET6 if ":" in host else _socket.AF_INET
    if host.replace(".", "").isdigit() or family == _socket.AF_INET6:
        addr = (host, port)
    else:
        info = _socket.getaddrinfo(host, port, 0, _socket.SOCK_STREAM)[0]
        family, addr = info[0], info[4]
    sock = _socket.socket(family, _socket.SOCK_STREAM)
    try:
        def left() -> float:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("daemon did not answer in time")
            return remaining

        sock.settimeout(left())
        sock.connect(addr)
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        request = (f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
                   f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                   f"Connection: close\r\n{head}\r\n").encode("latin-1") + body
        sent = 0
        while sent < len(request):
            sock.settimeout(left())
            sent += sock.send(request[sent:])
        chunks = []
        while True:
            sock.settimeout(left())
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        sock.close()
    raw = b"".join(chunks)
    head_end = raw.find(b"\r\n\r\n")
    if not raw.startswith(b"HTTP/") or head_end < 0:
        raise ValueError("not an HTTP answer")
    status = int(raw.split(b" ", 2)[1])
    head_text = raw[:head_end].lower()
    payload = raw[head_end + 4:]
    if b"transfer-encoding: chunked" in head_text:
        payload = _unchunk(payload)
    return status, payload


def _unchunk(data: bytes) -> bytes:
    out, pos = [], 0
    while True:
        line_end = data.index(b"\r\n", pos)
        size = int(data[pos:line_end].split(b";")[0], 16)
        if size == 0:
            return b"".join(out)
        out.append(data[line_end + 2:line_end + 2 + size])
        pos = line_end + 2 + size + 2


def _read_stdin() -> bytes:
    stdin = sys.stdin
    if stdin is None or stdin.isatty():
        return b"{}"
    return stdin.buffer.read(MAX_PAYLOAD + 1)


def _spool(home: str, event_id: str, at: str, harness: str, event: str, payload: bytes,
           why: str) -> None:
    from continuity.daemon.hooks.spool import append, native_line

    try:
        append(home, native_line(event_id, at, harness, event, payload))
        _note(f"daemon unavailable ({why}); {event} spooled for replay")
    except Exception as exc:  # noqa: BLE001 - never fail the agent, even with a full disk
        _note(f"daemon unavailable ({why}) and the spool failed too: {exc}")


def run(argv: list[str]) -> int:
    """Do the hook (module docstring); returns the exit status, which is always 0."""
    if os.environ.get("CONTINUITY_NO_HOOKS") == "1":
        return 0
    if any(a in ("-h", "--help") for a in argv):
        sys.stdout.write(USAGE)
        return 0
    try:
        argv, home_arg = take_home(argv)
        event, harness, timeout = parse_args(argv)
    except ValueError as exc:
        _note(f"{exc}\n{USAGE}")
        return 0
    from continuity.daemon.hooks.spool import fast_home, iso_now, new_event_id

    home = os.path.expanduser(home_arg) if home_arg else fast_home()
    event_id, at = new_event_id(), iso_now()
    payload = b""
    try:
        payload = _read_stdin()
        env_timeout = os.environ.get("CONTINUITY_HOOK_TIMEOUT")
        seconds = timeout or (float(env_timeout) if env_timeout else TIMEOUTS[event])
        host, port = daemon_address(home)
        headers = {"X-Continuity-Event-Id": event_id, "X-Continuity-Event-At": at}
        token = daemon_token(home)
        if token:
            headers["Authorization"] = f"Bearer {token}"
        status, answer = post(host, port, f"/api/harness/{harness}/{event}", payload, headers,
                              time.monotonic() + seconds)
    except Exception as exc:  # noqa: BLE001 - down, slow, refused or broken: spool, exit 0
        _spool(home, event_id, at, harness, event, payload, f"{exc.__class__.__name__}: {exc}")
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
        _note(f"daemon rejected the {event} event (HTTP {status}): "
              f"{answer[:300].decode('utf-8', 'replace')}")
        return 0
    _spool(home, event_id, at, harness, event, payload, f"HTTP {status}")
    return 0


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (``continuity-hook``); also reached from ``continuity hook``."""
    try:
        code = run(sys.argv[1:] if argv is None else argv)
    except BaseException:  # noqa: BLE001 - B62: a hook never fails the agent
        code = 0
    sys.exit(code)


def console() -> None:
    """A ``continuity`` console-script entry that keeps ``continuity hook ...`` fast: the hook
    runs without importing the CLI (Typer, Rich); any other command goes to
    ``continuity.cli.app.main``."""
    if len(sys.argv) > 1 and sys.argv[1] == "hook":
        main(sys.argv[2:])
    from continuity.cli.app import main as cli_main

    cli_main()


if __name__ == "__main__":  # pragma: no cover
    main()
