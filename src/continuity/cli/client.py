"""One HTTP request to the workspace's running daemon, with only the standard library: the
hook command's (``cli.hookcmd``: a harness waits on it, so it loads as little as it can) and
the read commands' fast path (``cli.fast``: ``search`` as the daemon's client, issue 43).

``post`` sends one HTTP/1.1 POST over a fresh socket; ``daemon_headers`` names the daemon of
the workspace (its id) and carries the workspace's token (``continuity.daemon.address``).
"""

from __future__ import annotations

import time

from continuity.daemon.address import WORKSPACE_HEADER, daemon_id, daemon_token


def post(
    host: str, port: int, path: str, body: bytes, headers: dict[str, str], deadline: float
) -> tuple[int, bytes]:
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
        request = (
            f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            f"Connection: close\r\n{head}\r\n"
        ).encode("latin-1") + body
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
    payload = raw[head_end + 4 :]
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
        out.append(data[line_end + 2 : line_end + 2 + size])
        pos = line_end + 2 + size + 2


def daemon_headers(home: str) -> dict[str, str]:
    """The headers naming this workspace's daemon (its id, when found in ``daemon.id``) and
    carrying the workspace's token (``continuity.daemon.address``)."""
    headers: dict[str, str] = {}
    workspace = daemon_id(home)
    if workspace:
        headers[WORKSPACE_HEADER] = workspace
    token = daemon_token(home)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


__all__ = ["daemon_headers", "post"]
