"""Secret redaction: the one funnel every derived text passes through before it is stored or
served (checkpoint digests, remembers, prompt snippets, memory queries, summaries, continuation
text). Raw transcripts stay lossless; what flows outward is redacted (B29). Only the texts given
are touched: opaque fields such as signatures are never passed in (B30).

``redact(text)`` replaces each secret with a typed marker ``[REDACTED:<kind>]`` and leaves
ordinary text byte-identical. Detectors, each giving spans of ``text``:

- **token shapes** recognised by prefix and length (OpenAI, Anthropic, Google API keys and
  OAuth client secrets ``GOCSPX-``, AWS access key ids, GitHub, GitLab, Slack incl. app-level
  ``xapp-``, Stripe, npm, Hugging Face, SendGrid, JWTs). The span grows to the whole contiguous
  token run on both sides, so a longer token or a ``_old`` suffix never leaks its tail (B33).
  A legacy or short ``sk-`` key must start a token (``task-<hex>``, ``disk-<hex>`` are ids);
  a Twilio API key is exactly ``SK`` + 32 lowercase hex standing alone (account SIDs ``AC…``
  are not secrets);
- **key = value** where the key names a secret (``DB_PASSWORD=…``, ``"apiKey": "…"``,
  ``client_secret: …``, ``--token …``, ``AccountKey=…;``): the value goes, the key stays. Keys
  are split into words (``_ - .`` and camelCase; of a dotted key only the last part counts);
  a key is secret when a word is ``password``, ``passwd``, ``pwd``, ``secret``, ``token``,
  ``credential``…, or holds ``password``/``passwd`` or ends in ``pwd`` glued to a prefix
  (``PGPASSWORD``, ``MYSQL_PWD``), or it ends in ``key`` after ``api``, ``access``,
  ``account``…; an ALL_CAPS ``…_KEY`` in ``NAME=value`` form and an ``auth`` key count only
  for a machine-made value that is not lowercase words joined by ``_``
  (``SORT_KEY=created_at_desc_2024``). ``PWD``/``OLDPWD`` holding a directory are kept.
  In prose, ``the password is hunter2xyz`` / ``was set to `…` ``: the value goes when it is
  machine-like (a letter and a digit, or mixed case), not ``the password is in the vault``.
  No word may mark metadata (``max_tokens``, ``token_count``, ``password_file``,
  ``secret_name``…). Placeholders (``$VAR``, ``${X}``, ``<token>``, ``***``, ``null``,
  ``sk-ant-...``), code (``token=token``, ``os.environ[...]``, ``NAME = "word"``) and type
  annotations (``credential: TokenCredential``) are left alone;
- **Authorization headers** (``Bearer``, ``Basic`` base64, ``token``) and free ``Bearer``
  tokens: the credential goes, the scheme word stays;
- **credentials inside URLs** and connection strings (``postgres://admin:hunter2@host``): the
  password goes (B29), the user stays unless it is itself token-like. A password holding
  ``# / ? @`` unescaped (``postgres://a:hunter#2@db``) goes up to the last ``@`` before the
  host (a port before a path, ``host:8080/@me``, is not a password);
- **command lines**: ``curl -u/--user user:pass`` (the user stays; outside an HTTP client's
  command the password must look machine-made, so ``docker -u 1000:1000`` stays), a MySQL or
  MariaDB client's glued ``-pS3cret`` (a spaced ``-p`` prompts) and ``sshpass -p pw``;
- **PEM private-key blocks** and **``<private>…</private>``** spans (B31), also with
  attributes (``<private reason='x'>``), to the end of the text when unclosed.

Kinds: ``openai-key anthropic-key google-api-key google-oauth-token google-oauth-secret
aws-access-key github-token gitlab-token slack-token slack-webhook stripe-key twilio-key
npm-token huggingface-token sendgrid-key jwt bearer-token basic-auth auth-token url-credential
private-key private password token api-key secret credential base64-credential``.

Not redacted (no false positives): paths, git SHAs, UUIDs, content digests, long base64 that no
secret-named key or header introduces (images, signatures), prose that mentions tokens or
passwords. ``redact`` is idempotent: markers never match a detector.

Speed: one trie regex finds every literal anchor (token prefixes, secret words in three
casings, ``Authorization``, ``Bearer``, ``://``, ``-u``/``--user``/``-p``, key-block markers,
``<private``) in a single pass, and each detector runs only where its anchor occurs
(bench/checkpoints.py: tens of MB/s on real transcripts; a 600-character digest in about
20 µs).

Why our own patterns rather than a detector library: detect-secrets 1.5.0 (last release May
2024) is line and file oriented and reports findings, not spans to rewrite. Measured on the
same corpus and text (scan_file, default plugins and filters): 0.6 MB/s, 39 of the 81 corpus
secrets missed (Bearer tokens, URL passwords, OpenAI/Google/Stripe shapes, ``<private>``) and
12 of the 71 look-alikes flagged (digests, the B30 signature, TypeScript types, prose).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable

from continuity.text import clean

__all__ = ["Finding", "find_secrets", "redact", "redact_all", "marker"]


@dataclass(frozen=True, slots=True)
class Finding:
    """A secret at ``text[start:end]`` (character offsets) of kind ``kind``."""

    start: int
    end: int
    kind: str
    priority: int = 1


def marker(kind: str) -> str:
    """The typed marker that replaces a secret of ``kind``: ``[REDACTED:<kind>]``."""
    return f"[REDACTED:{kind}]"


# ---------------------------------------------------------------------------- token shapes

#: (kind, literal anchors, pattern matched at each anchor): provider token shapes. Scanning for
#: literal anchors first keeps redaction fast (the regex engine searches literals quickly and
#: alternations slowly); the run around a match is redacted whole (B33).
_SHAPES: list[tuple[str, tuple[str, ...], str]] = [
    ("anthropic-key", ("sk-",), r"sk-ant-[A-Za-z0-9_-]{20,}"),
    ("openai-key", ("sk-",), r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}"),
    ("sk-legacy", ("sk-",), r"sk-[A-Za-z0-9]{32,}"),
    ("sk-generic", ("sk-",), r"sk-[A-Za-z0-9_-]{12,}"),
    ("stripe-key", ("_live_", "_test_"), r"[srp]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("stripe-key", ("whsec_",), r"whsec_[A-Za-z0-9]{24,}"),
    ("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"gh[pousr]_[A-Za-z0-9]{30,}"),
    ("github-token", ("github_pat_",), r"github_pat_[A-Za-z0-9_]{30,}"),
    ("gitlab-token", ("glpat-",), r"glpat-[A-Za-z0-9_-]{20,}"),
    ("aws-access-key", ("AKIA", "ASIA", "ABIA", "ACCA"), r"A[KSBC][IC]A[A-Z0-9]{16}"),
    ("google-api-key", ("AIza",), r"AIza[A-Za-z0-9_-]{35}"),
    ("google-oauth-token", ("ya29.",), r"ya29\.[A-Za-z0-9_-]{20,}"),
    ("google-oauth-secret", ("SPX-",), r"GOCSPX-[A-Za-z0-9_-]{20,}"),
    ("slack-webhook", ("hooks.slack.com/services/",),
     r"hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+"),
    ("slack-token", ("xox",), r"xox[abeoprs]-[A-Za-z0-9-]{10,}"),
    ("slack-token", ("xapp-",), r"xapp-\d+-[A-Za-z0-9-]{10,}"),
    ("twilio-key", ("SK",), r"SK[0-9a-f]{32}(?![A-Za-z0-9_-])"),
    ("npm-token", ("npm_",), r"npm_[A-Za-z0-9]{36,}"),
    ("huggingface-token", ("hf_",), r"hf_[A-Za-z]{30,}"),
    ("sendgrid-key", ("SG.",), r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
    ("jwt", ("eyJ",), r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*"),
]
#: anchor -> [(kind, compiled pattern, offset of the pattern's start from the anchor)]
_SHAPE_ANCHORS: dict[str, list[tuple[str, re.Pattern[str], int]]] = {}
for _kind, _anchors, _pattern in _SHAPES:
    for _anchor in _anchors:
        _offset = {"_live_": -2, "_test_": -2, "SPX-": -3}.get(_anchor, 0)
        _SHAPE_ANCHORS.setdefault(_anchor, []).append((_kind, re.compile(_pattern), _offset))
_RUN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_RUN_LEFT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_HAS_DIGIT = re.compile(r"\d")
_HAS_ALPHA = re.compile(r"[A-Za-z]")


def _shape_at(text: str, hit: int, shapes: list[tuple[str, re.Pattern[str], int]]
              ) -> Finding | None:
    for kind, pattern, offset in shapes:
        at = hit + offset
        if at < 0:
            continue
        m = pattern.match(text, at)
        if not m:
            continue
        before = text[at - 1] if at > 0 else " "
        if kind == "sk-legacy":  # at a token start ("task-<hex>" is an id), or OpenAI's marker
            if before.isalnum() and "T3BlbkFJ" not in m.group():
                continue
            kind = "openai-key"
        elif kind == "sk-generic":  # a short "sk-" key: at a token start, with a digit
            body = m.group()[3:]
            if before in _RUN or not (_HAS_DIGIT.search(body) and _HAS_ALPHA.search(body)):
                continue
            kind = "openai-key"
        elif kind == "stripe-key" and not _HAS_DIGIT.search(m.group()):
            continue
        elif kind == "twilio-key" and before in _RUN:  # exactly "SK" + 32 hex, alone
            continue
        start, end = m.span()
        if kind not in ("slack-webhook", "twilio-key"):
            n = len(text)
            while start > 0 and text[start - 1] in _RUN_LEFT:
                start -= 1
            while end < n and text[end] in _RUN:
                end += 1
            while end < n and text[end] == "=" and end - m.end() < 3:
                end += 1
        return Finding(start, end, kind, 3)
    return None


# ---------------------------------------------------------------------------- blocks

#: a <private> span, also with attributes (``<private reason='x'>``: each ``name=value``, so
#: prose like ``<private or public>`` is no tag); unclosed, it runs to the end of the text,
#: unless the tag is only quoted (``<private>`` in code or docs: a quote, backtick or bracket
#: right after it)
_PRIVATE_RE = re.compile(
    r"(?is)<private(?:\s+[\w:.-]+\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s\"'<>]+))*\s*>"
    r"(?:.*?</private\s*>|(?![`'\")\]]).*\Z)")
_PEM_RE = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
    r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)", re.S)


def _block_findings(text: str, pattern: re.Pattern[str], kind: str) -> Iterable[Finding]:
    for m in pattern.finditer(text):
        yield Finding(m.start(), m.end(), kind, 4)


# ---------------------------------------------------------------------------- headers, URLs

_AUTH_RE = re.compile(
    r"(?i)authorization\\*[\"']?[ \t]*[:=][ \t]*\\*[\"']?"
    r"(?:(?P<scheme>bearer|basic|token|bot|apikey)[ \t]+)?(?P<val>[A-Za-z0-9._~+/:=-]+)")
_BEARER_RE = re.compile(r"(?i)bearer[ \t]+(?P<val>[A-Za-z0-9._~+/-]+=*)")
_URL_RE = re.compile(
    r"[A-Za-z][A-Za-z0-9+.-]{0,30}://"
    r"(?P<user>[^\s:/?#@\"'<>\[\]]*)(?::(?P<pw>[^\s/?#\"'<>]*))?@(?=[^\s@/?#]*[A-Za-z0-9\]])")
#: ``scheme://user:`` and the rest of the URL, for a password holding ``# / ? @`` unescaped
_URL_LOOSE_RE = re.compile(
    r"[A-Za-z][A-Za-z0-9+.-]{0,30}://(?P<user>[^\s:/?#@\"'<>\[\]]*):(?P<rest>[^\s\"'<>]{1,300})")
_HOST_RE = re.compile(r"[A-Za-z0-9.\[\]-]*")
_HOST_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789[")
_SCHEME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-")


def _case_variants(word: str) -> tuple[str, ...]:
    return (word, word.capitalize(), word.upper())


def _credential_like(value: str, *, min_len: int = 8) -> bool:
    """A value that looks machine-made: long enough and with a digit, or mixed case, or
    symbols; or very long. Plain words (``required``, ``Bearer token``) are not."""
    if len(value) < min_len or _is_placeholder(value):
        return False
    if len(value) >= 24:
        return True
    if _HAS_DIGIT.search(value) and _HAS_ALPHA.search(value):
        return True
    lower = value.lower()
    return lower != value and value.upper() != value and value[1:].lower() != value[1:]


def _auth_at(text: str, hit: int) -> Finding | None:
    """The credential of an ``Authorization`` header whose name starts at ``hit``."""
    if hit > 0 and text[hit - 1].isalpha():
        return None
    m = _AUTH_RE.match(text, hit)
    if not m:
        return None
    value = m.group("val").rstrip(".,:")
    scheme = (m.group("scheme") or "").lower()
    if len(value) < 6 or _is_placeholder(value) or (not scheme and not _credential_like(value)):
        return None
    kind = {"bearer": "bearer-token", "basic": "basic-auth"}.get(scheme, "auth-token")
    start = m.start("val")
    return Finding(start, start + len(value), kind, 2)


def _bearer_at(text: str, hit: int) -> Finding | None:
    """The token after the word ``Bearer`` at ``hit`` when it looks machine-made (the word
    alone: not a path or name part like ``/bearer`` or ``x-bearer``)."""
    if hit > 0 and (text[hit - 1].isalnum() or text[hit - 1] in "_-/."):
        return None
    m = _BEARER_RE.match(text, hit)
    if m and _credential_like(m.group("val")):
        return Finding(m.start("val"), m.end("val"), "bearer-token", 2)
    return None


def _url_at(text: str, hit: int) -> Finding | None:
    """The password (or token-like user) of the URL whose ``://`` is at ``hit``."""
    start = hit
    while start > 0 and text[start - 1] in _SCHEME_CHARS and hit - start <= 30:
        start -= 1
    while start < hit and not text[start].isalpha():
        start += 1
    m = _URL_RE.match(text, start)
    if not m:
        return _loose_url_at(text, start)
    pw = m.group("pw")
    if pw and not _is_placeholder(pw):
        if "." not in _HOST_RE.match(text, m.end()).group():  # "p@ss/w0rd@db.internal"
            loose = _loose_url_at(text, start, dotted=True)
            if loose and loose.end > m.end("pw"):
                return loose
        return Finding(m.start("pw"), m.end("pw"), "url-credential", 2)
    user = m.group("user")
    if user and not pw and _credential_like(user, min_len=16):
        return Finding(m.start("user"), m.end("user"), "url-credential", 2)
    return None


def _loose_url_at(text: str, start: int, *, dotted: bool = False) -> Finding | None:
    """The password of ``scheme://user:pass@host`` when it holds ``#``, ``/``, ``?`` or ``@``
    unescaped (``postgres://a:hunter#2@db``): everything up to the last ``@`` followed by a
    host (with ``dotted``, a host with a dot). A port before a path (``http://host:8080/@me``)
    is not a password. (``_url_at`` also prefers this to ``a:p@ss/w0rd@db.internal`` read
    as host ``ss``: a dotless host followed by ``@`` and a dotted one.)"""
    m = _URL_LOOSE_RE.match(text, start)
    if not m:
        return None
    rest = m.group("rest")
    at = rest.rfind("@")
    while at > 0 and (at + 1 >= len(rest) or rest[at + 1] not in _HOST_START or (
            dotted and "." not in _HOST_RE.match(rest, at + 1).group())):
        at = rest.rfind("@", 0, at)
    if at <= 0:
        return None
    pw = rest[:at]
    if re.split(r"[/?#]", pw, maxsplit=1)[0].isdigit() or _is_placeholder(pw):
        return None
    return Finding(m.start("rest"), m.start("rest") + at, "url-credential", 2)


# ---------------------------------------------------------------------------- key = value

#: words that make a key secret on their own
_SECRET_WORDS = {
    "password": "password", "passwd": "password", "pwd": "password", "pass": "password",
    "passphrase": "password", "passcode": "password", "secret": "secret",
    "token": "token", "credential": "credential", "credentials": "credential",
    "apikey": "api-key", "privatekey": "private-key",
    "accesskey": "api-key", "secretkey": "secret",
}
#: when a key holds several secret words (``x-auth-token``), the most specific kind wins
_KIND_ORDER = ("password", "private-key", "token", "api-key", "credential", "secret")
#: words before a final ``key`` that make it secret (``api_key``, ``AccountKey``…)
_KEY_QUALIFIERS = {
    "api", "access", "secret", "private", "account", "storage", "signing", "encryption",
    "master", "subscription", "app", "auth", "client", "service", "webhook", "shared",
    "license", "deploy", "admin", "consumer",
}
#: words that mark a key as metadata about a secret, not the secret itself
_MODIFIERS = {
    "count", "counts", "limit", "limits", "max", "min", "len", "length", "size", "type",
    "types", "url", "uri", "urls", "endpoint", "path", "paths", "file", "files", "filename",
    "dir", "name", "names", "id", "ids", "expires", "expiry", "expiration", "exp", "ttl",
    "usage", "budget", "hint", "policy", "prompt", "field", "fields", "label", "env", "var",
    "header", "param", "mode", "format", "regex", "pattern", "required", "enabled", "rotation",
    "kind", "ref", "prefix", "suffix", "index", "num", "number", "total", "used", "remaining",
    "cost", "window", "helper", "manager", "store", "provider", "source", "location",
    "command", "cmd", "version", "method", "scheme", "algorithm", "alg", "lifetime",
    "timeout", "retry", "cache", "is", "has", "reset", "strength", "input", "placeholder",
    "validator", "estimate", "tokens", "in", "out", "output", "rate", "pos",
    "position", "start", "end", "class", "fingerprint", "generation", "ms", "sec", "secs",
    "seconds", "time", "at", "date", "first", "last",
}
#: literal stems whose hits start a key check (lower, Capitalized and UPPER forms)
_STEMS = tuple(v for w in ("pass", "pwd", "secret", "token", "key", "credential", "auth")
               for v in _case_variants(w))
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_WORD_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_SEP_RE = re.compile(r"(\\*[\"'])?([ \t]*)(=>|:=|=(?!=)|:(?![:/\\]))([ \t]*)")
_FLAG_SEP_RE = re.compile(r"[ \t]+(?=[^\s-])")
_QUOTED_RE = {
    '"': re.compile(r'"((?:[^"\\\n]|\\[^"\n])*)"'),
    "'": re.compile(r"'([^'\\\n]*)'"),
}
_PROSE_KEY_RE = re.compile(r"(?i)pass(?:w|phrase|code)")
_PROSE_RE = re.compile(
    r"[ \t]+(?:is|was)(?:[ \t]+(?:now|still|set[ \t]+to|changed[ \t]+to))?[ \t]+(?=[^\s])")
_OPEN_QUOTE_RE = re.compile(r"\\*[\"']")
_UNQUOTED_RE = re.compile(r"(?:[^\s\"'`\\,;&<>|]|&(?![A-Za-z_][\w.-]*=))+")
_CODE_RE = re.compile(
    r"[a-z_][A-Za-z_]*(?:\.[A-Za-z_]\w*)*\Z|[A-Za-z_][\w.]*[(\[]|[\[({]")
_TYPE_RE = re.compile(r"(?:[A-Za-z_]+|(?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*)(?:\[[\w\[\], .|]*\])?\Z")
_PLACEHOLDER_WORDS = {
    "null", "none", "nil", "true", "false", "undefined", "empty", "redacted", "hidden",
    "masked", "required", "optional", "string", "str", "bool", "int",
    # a value that only names what it stands for (docs, mapping tables): user:pass@host
    "password", "passwd", "pass", "pwd", "secret", "token", "apikey", "api_key", "api-key",
    "key", "credential", "credentials", "private-key", "auth", "basic", "bearer", "digest",
}


_ALNUM_RUN_RE = re.compile(r"[A-Za-z0-9]{8,}")
_HAS_ALNUM = re.compile(r"[A-Za-z0-9]")
#: lowercase words joined by ``_`` (``created_at_desc_2024``): a setting, not a secret
_SNAKE_WORDS_RE = re.compile(r"(?:[a-z]+|\d+)(?:_(?:[a-z]+|\d+))+\Z")
#: a directory: the shell's ``PWD=/home/dev``, ``OLDPWD=~/src`` (not ``MYSQL_PWD=/x``)
_DIR_RE = re.compile(r"~?/[\w./~-]*\Z")
_FORMAT_RE = re.compile(r"%[sd(]|\{[A-Za-z_0-9]*\}")
_WORD_ONLY_RE = re.compile(r"[A-Za-z_]+\Z")
#: an ALL_CAPS variable name (``ANTHROPIC_AUTH_TOKEN``) or a colour (``#cccccc``)
_NAME_RE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|#[0-9A-Fa-f]{3,8}")
#: a reference or template, not a value: $VAR ${VAR} $(cmd) %s %(name)s %VAR% <name> {name}
_TEMPLATE_RE = re.compile(
    r"\$[A-Za-z_{(].*|%[sd]|%\(\w+\)[sd]|%\w+%|<[^<>]*>|\{\{?[^{}]*\}?\}", re.S)


def _is_placeholder(value: str) -> bool:
    """``$VAR``, ``${X}``, ``<token>``, ``***``, ``xxxx``, ``null``, ``sk-ant-...``, an
    ALL_CAPS variable name, a colour: not a secret (an elided value counts as one only if 8 or
    more letters/digits run unbroken)."""
    v = value.strip()
    if not v or v.startswith(("[REDACTED", "process.env", "os.environ")):
        return True
    if _TEMPLATE_RE.fullmatch(v) or _NAME_RE.fullmatch(v) or not _HAS_ALNUM.search(v):
        return True
    low = v.lower()
    if low in _PLACEHOLDER_WORDS or low.startswith("your") or low.endswith(("-here", "_here")):
        return True
    if ("..." in v or "\u2026" in v) and not _ALNUM_RUN_RE.search(v):
        return True
    return len(set(low)) == 1 and v[0] in "x*.#-_"


@lru_cache(maxsize=4096)
def _key_kind(key: str) -> tuple[str, bool] | None:
    """``(kind, weak)`` for a key naming a secret (``password``, ``token``…), None for an
    ordinary key. Only the last part of a dotted key counts (``token.markup`` is not secret,
    ``config.password`` is). ``weak`` keys need a machine-made value: ``auth`` (an auth object
    in code, a base64 credential in Docker's config) and ALL_CAPS names ending in ``KEY``
    (``STRIPE_KEY=…`` in env form, but not ``CACHE_KEY = "stats"`` in code)."""
    words = [w.lower() for w in _WORD_RE.findall(key.rsplit(".", 1)[-1])]
    if not words or any(w in _MODIFIERS for w in words):
        return None
    kinds = {_SECRET_WORDS.get(w) or _glued_password(w) for w in words}
    for kind in _KIND_ORDER:
        if kind in kinds:
            return kind, False
    if words[-1] == "key" and len(words) >= 2:
        if words[-2] in _KEY_QUALIFIERS:
            return ("api-key" if words[-2] == "api" else "secret"), False
        if key.upper() == key and "_" in key:
            return "secret", True
    if "auth" in words:
        return "secret", True
    return None


def _glued_password(word: str) -> str | None:
    """``password`` for a word that holds one glued to a prefix (``PGPASSWORD``, ``MYSQLPWD``,
    ``DBPASSWD``: env names split into no words), else None."""
    if ("pass" in word and ("password" in word or "passwd" in word)) or word.endswith("pwd"):
        return "password"
    return None


_B64_RE = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}\Z")


def _value_kind(value: str, key_kind: str) -> str:
    """``base64-credential`` for a base64 blob (padding, ``+``/``/``, or a whole number of
    quads mixing cases and digits), else the key's kind."""
    if _B64_RE.match(value) and ("=" in value or "+" in value or "/" in value or (
            len(value) % 4 == 0 and value.lower() != value and value.upper() != value
            and _HAS_DIGIT.search(value))):
        return "base64-credential"
    return key_kind


def _quoted_span(text: str, pos: int) -> tuple[int, int] | None:
    """The inside of the quoted string opening at ``pos`` (``"…"``, ``'…'`` or a JSON-escaped
    ``\\"…\\"``), or None."""
    m = _OPEN_QUOTE_RE.match(text, pos)
    if not m:
        return None
    quote = m.group()
    if len(quote) > 1:
        close = text.find(quote, m.end(), m.end() + 2000)
        return (m.end(), close) if close >= 0 else None
    q = _QUOTED_RE[quote].match(text, pos)
    return q.span(1) if q else None


def _unquoted_value(text: str, pos: int) -> str:
    """The bare value at ``pos``: up to a space, quote or separator, without trailing ``.``,
    ``:`` or unbalanced closing brackets ("" for an elided placeholder like ``sk-ant-...``)."""
    u = _UNQUOTED_RE.match(text, pos)
    value = u.group() if u else ""
    if _is_placeholder(value):
        return ""
    while value and (value[-1] in ".:" or (value[-1] in ")]}" and value.count(value[-1])
                                             > value.count("([{"[")]}".index(value[-1])]))):
        value = value[:-1]
    return value


def _kv_value(text: str, pos: int, *, tight: bool, flag: bool, env: bool, kind: str,
              assign: bool = False) -> tuple[int, int] | None:
    """The span of the value starting at ``pos`` when it should be redacted. Quoted values
    go unless they are placeholders or templates whose rest is not machine-made
    (``"%s_x"``, but not ``"000000Q7%d"``), or a plain word assigned in
    code (``assign``: ``NAME = "word"``, a parser token or constant); bare values must also not
    look like code (``token``, ``args.token``, ``get_token()``), and with a spaced
    ``key: value`` not like a type (``TokenCredential``) or prose (it must look machine-made,
    or the key be ALL_CAPS)."""
    if _OPEN_QUOTE_RE.match(text, pos):
        span = _quoted_span(text, pos)
        if span is None or span[1] - span[0] < 3:
            return None
        value = text[span[0]:span[1]]
        if _is_placeholder(value) or (_FORMAT_RE.search(value) and not _credential_like(
                _FORMAT_RE.sub("", value))) or (
                assign and _WORD_ONLY_RE.match(value)):
            return None
        return span
    value = _unquoted_value(text, pos)
    if len(value) < 4 or _is_placeholder(value) or (value.isdigit() and kind != "password"):
        return None
    if not (tight and env) and _CODE_RE.match(value):
        return None
    if not (tight or flag or env or _credential_like(value)) or (
            not tight and not flag and _TYPE_RE.match(value)):
        return None
    return pos, pos + len(value)


def _env_double_equals(text: str, ke: int, kind: str, weak: bool) -> Finding | None:
    """The value of ``NAME==value`` (env form): everything after the first ``=``."""
    span = _kv_value(text, ke + 1, tight=True, flag=False, env=True, kind=kind)
    if not span or (weak and not _credential_like(text[span[0]:span[1]])):
        return None
    return Finding(span[0], span[1], _value_kind(text[span[0]:span[1]], kind), 1)


def _kv_at(text: str, hit: int, seen: set[int]) -> Finding | None:
    """The value of the key around ``hit`` when the key names a secret (each key once)."""
    n = len(text)
    ks, ke = hit, hit + 1
    while ks > 0 and text[ks - 1] in _KEY_CHARS and hit - ks < 80:
        ks -= 1
    if ks in seen:
        return None
    seen.add(ks)
    while ke < n and text[ke] in _KEY_CHARS and ke - hit < 80:
        ke += 1
    raw = text[ks:ke].rstrip("-.")
    key = raw.lstrip("-.")
    flag = raw.startswith("-") and not raw.startswith("---")
    named = _key_kind(key)
    if named is None:
        return None
    kind, weak = named
    ke = ks + len(raw)
    env = key.upper() == key and any(c.isalpha() for c in key)
    sep = _SEP_RE.match(text, ke)
    if sep is None and env and text.startswith("==", ke):
        # ``NAME==value`` in env form assigns "=value" (a comparison is spaced or lower case).
        return _env_double_equals(text, ke, kind, weak)
    if sep:
        tight = not sep.group(2) and not sep.group(4)
        if weak and key.upper() == key and not (tight and sep.group(3) == "="):
            return None
        span = _kv_value(text, sep.end(), tight=tight, flag=flag, env=env, kind=kind,
                         assign=not tight and sep.group(3) == "=")
        if weak and span and _weak_value_plain(text[span[0]:span[1]]):
            return None
    elif flag and (fs := _FLAG_SEP_RE.match(text, ke)):
        span = _kv_value(text, fs.end(), tight=False, flag=True, env=False, kind=kind)
    else:
        return _prose_at(text, ke) if _PROSE_KEY_RE.search(key) else None
    if not span or (key.lower() in ("pwd", "oldpwd") and _DIR_RE.match(text[span[0]:span[1]])):
        return None
    return Finding(span[0], span[1], _value_kind(text[span[0]:span[1]], kind), 1)


def _weak_value_plain(value: str) -> bool:
    """True when the value of a weak key (``SORT_KEY``, ``auth``) is not machine-made, or is
    lowercase words joined by ``_``."""
    return not _credential_like(value) or bool(_SNAKE_WORDS_RE.match(value))


def _machine_like(value: str) -> bool:
    """A value in prose that looks made, not written: 6+ characters, not a placeholder, with a
    letter and a digit or with mixed case inside (``hunter2xyz``, ``Tr0ub4dor&3``, ``aBcDeF``;
    not ``vault``, ``Hunter``)."""
    if len(value) < 6 or _is_placeholder(value):
        return False
    if _HAS_DIGIT.search(value) and _HAS_ALPHA.search(value):
        return True
    return value[1:].lower() != value[1:] and value.upper() != value


def _prose_at(text: str, pos: int) -> Finding | None:
    """The password in prose after a password word ending at ``pos``: ``… password is
    hunter2xyz``, ``password was set to `S3cret!x` ``, when the value is machine-like."""
    m = _PROSE_RE.match(text, pos)
    if not m:
        return None
    at = m.end()
    span = _quoted_span(text, at) if text[at] in "'\"" else None
    if text[at] == "`":
        close = text.find("`", at + 1, at + 200)
        span = (at + 1, close) if close > at + 1 else None
    elif span is None:
        u = _UNQUOTED_RE.match(text, m.end())
        span = (m.end(), m.end() + (len(u.group().rstrip(".,:;!?)]}")) if u else 0))
    if span is None or not _machine_like(text[span[0]:span[1]]):
        return None
    return Finding(span[0], span[1], "password", 1)


# ---------------------------------------------------------------------------- command lines

_USER_FLAG_RE = re.compile(r"(?:-u|--user)(?:[ \t]+|=|(?=[^\s-]))")
_HTTP_CLIENT_RE = re.compile(r"\b(?:curl|wget|http|https|httpie|xh)\b")
#: the program of the command a ``-p`` belongs to: ``sshpass`` right before it (only other
#: options between), or a MySQL/MariaDB client anywhere before it in the command
_SSHPASS_RE = re.compile(r"(?<![\w.-])sshpass(?:[ \t]+-[a-oq-zA-Z]\S*)*[ \t]+\Z")
_MYSQL_RE = re.compile(r"(?<![\w.-])(?:mysql|mariadb)[a-z-]*[ \t]")
_COMMAND_END_RE = re.compile(r".*[;|&\n]", re.S)


def _arg_span(text: str, pos: int) -> tuple[int, int] | None:
    """The command-line argument at ``pos``: the inside of a quoted one, else up to a space."""
    if text[pos] in "'\"":
        return _quoted_span(text, pos)
    u = _UNQUOTED_RE.match(text, pos)
    return (pos, u.end()) if u else None


def _literal_password(value: str) -> bool:
    """A value given as a password on a command line: anything but a reference (``$PW``,
    ``<password>``) or a mask (``***``); plain words (``secret``) count."""
    return value.lower() in _PLACEHOLDER_WORDS or not _is_placeholder(value)


def _user_flag_at(text: str, hit: int) -> Finding | None:
    """The password of ``-u user:pass`` / ``--user user:pass`` (curl, wget): the user stays.
    Outside an HTTP client's command line the password must look machine-made, so Docker's
    ``-u 1000:1000`` and ``--user app:app`` stay."""
    if hit > 0 and not text[hit - 1].isspace():
        return None
    m = _USER_FLAG_RE.match(text, hit)
    span = _arg_span(text, m.end()) if m and m.end() < len(text) else None
    if not span or ":" not in text[span[0]:span[1]]:
        return None
    user, pw = text[span[0]:span[1]].split(":", 1)
    if not pw or pw == user or pw.isdigit() or not _literal_password(pw):
        return None
    line = text[max(text.rfind("\n", 0, hit) + 1, hit - 300):hit]
    if not (_credential_like(pw, min_len=6) or _HTTP_CLIENT_RE.search(line)):
        return None
    return Finding(span[1] - len(pw), span[1], "password", 2)


def _command_password_at(text: str, hit: int) -> Finding | None:
    """The password after the ``-p`` at ``hit`` of ``sshpass -p pw`` or glued to a MySQL or
    MariaDB client's ``-p`` (``mysql -pS3cret``; a spaced ``-p`` prompts for it)."""
    if hit == 0 or text[hit - 1] not in " \t" or hit + 2 >= len(text):
        return None
    command = text[max(hit - 500, 0):hit]
    end = _COMMAND_END_RE.match(command)
    command = command[end.end():] if end else command
    pos = hit + 2
    if _SSHPASS_RE.search(command):
        while pos < len(text) and text[pos] in " \t":
            pos += 1
    elif text[pos] in " \t-" or not _MYSQL_RE.search(command):
        return None
    span = _arg_span(text, pos) if pos < len(text) and not text[pos].isspace() else None
    if not span or not _literal_password(text[span[0]:span[1]]):
        return None
    return Finding(span[0], span[1], "password", 2)


# ---------------------------------------------------------------------------- the funnel


def _trie_pattern(words: Iterable[str]) -> str:
    """A regex matching any of ``words``, as a trie (shared prefixes once, longest first), so
    the regex engine rejects most positions after one character."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        alts = [re.escape(ch) + emit(sub) for ch, sub in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body
    return emit(trie)


#: literal anchor -> what to run where it occurs; one trie regex finds every anchor
_HANDLERS: dict[str, list[str]] = {}
for _anchor in _SHAPE_ANCHORS:
    _HANDLERS.setdefault(_anchor, []).append("shape")
for _anchor in _STEMS:
    _HANDLERS.setdefault(_anchor, []).append("kv")
for _anchor in _case_variants("authorization"):
    _HANDLERS.setdefault(_anchor, []).append("auth")
for _anchor in _case_variants("bearer"):
    _HANDLERS.setdefault(_anchor, []).append("bearer")
_HANDLERS["://"] = ["url"]
_HANDLERS["-u"] = _HANDLERS["--user"] = ["user"]
_HANDLERS["-p"] = ["command"]
_HANDLERS["PRIVATE KEY"] = ["pem"]
for _anchor in _case_variants("<private"):
    _HANDLERS[_anchor] = ["private"]
#: a longer anchor also runs the handlers of the anchors it starts with ("authorization" ⊃ "auth")
_DISPATCH = {lit: [h for other, hs in _HANDLERS.items() if lit.startswith(other) for h in hs]
             for lit in _HANDLERS}
_ANCHOR_RE = re.compile(_trie_pattern(_HANDLERS))


def find_secrets(text: str) -> list[Finding]:
    """The secrets in ``text`` as non-overlapping spans in order (overlapping detections are
    merged; the kind is the most specific: block > token shape > header/URL > key = value)."""
    found: list[Finding] = []
    seen: set[int] = set()
    blocks: set[str] = set()
    search = _ANCHOR_RE.search
    m = search(text)
    while m:
        hit, lit = m.start(), m.group()
        for handler in _DISPATCH[lit]:
            f: Finding | None = None
            if handler == "shape":
                f = _shape_at(text, hit, _SHAPE_ANCHORS[lit])
            elif handler == "kv":
                f = _kv_at(text, hit, seen)
            elif handler == "auth":
                f = _auth_at(text, hit)
            elif handler == "bearer":
                f = _bearer_at(text, hit)
            elif handler == "url":
                f = _url_at(text, hit)
            elif handler == "user":
                f = _user_flag_at(text, hit)
            elif handler == "command":
                f = _command_password_at(text, hit)
            else:
                blocks.add(handler)
            if f is not None:
                found.append(f)
        m = search(text, hit + 1)  # overlapping: "keyeyJ…" still finds the JWT
    if "pem" in blocks:
        found.extend(_block_findings(text, _PEM_RE, "private-key"))
    if "private" in blocks:
        found.extend(_block_findings(text, _PRIVATE_RE, "private"))
    if not found:
        return []
    found.sort(key=lambda f: (f.start, -f.end))
    merged: list[Finding] = []
    for f in found:
        if merged and f.start < merged[-1].end:
            last = merged[-1]
            kind = f.kind if f.priority > last.priority else last.kind
            merged[-1] = Finding(last.start, max(last.end, f.end), kind,
                                 max(last.priority, f.priority))
        else:
            merged.append(f)
    return merged


def redact(text: str) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED:<kind>]`` (the module
    docstring lists the detectors and kinds). Text without secrets is returned unchanged (the
    same object); ``redact(redact(t)) == redact(t)``. Lone surrogates (undecodable bytes
    smuggled through a command line or a tool, B43/B45) become U+FFFD first, so the result
    always encodes as UTF-8."""
    text = clean(text)
    findings = find_secrets(text)
    if not findings:
        return text
    parts: list[str] = []
    pos = 0
    for f in findings:
        parts.append(text[pos:f.start])
        parts.append(marker(f.kind))
        pos = f.end
    parts.append(text[pos:])
    return "".join(parts)


def redact_all(texts: Iterable[str]) -> list[str]:
    """``[redact(t) for t in texts]``: for lists of queries, remembers and snippets."""
    return [redact(t) for t in texts]
