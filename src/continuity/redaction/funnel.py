"""Secret redaction: the one funnel every derived text passes through before it is stored or
served (checkpoint digests, remembers, prompt snippets, memory queries, summaries, continuation
text). Raw transcripts stay lossless; what flows outward is redacted (B29). Only the texts given
are touched: opaque fields such as signatures are never passed in (B30).

``redact(text)`` replaces each secret with a typed marker ``[REDACTED:<kind>]`` and leaves
ordinary text byte-identical. Detectors, each giving spans of ``text``:

- **token shapes** recognised by prefix and length (OpenAI, Anthropic, Google API keys and
  OAuth client secrets ``GOCSPX-``, AWS access key ids, GitHub, GitLab, Slack incl. app-level
  ``xapp-``, Stripe, npm, Docker ``dckr_pat_``, Hugging Face ``hf_``/``api_org_``, SendGrid,
  JWTs, DigitalOcean ``dop_v1_``/``doo_v1_``/``dor_v1_``, and, after the gitleaks rule set
  (issue 16; our own patterns), GitLab's other prefixes, Groq, PyPI, Shopify, Linear, Doppler,
  Postman, Atlassian, age, Databricks, Grafana, Vault, Sentry, New Relic, Heroku, Square,
  Supabase, Replicate, PlanetScale, xAI, Perplexity, Fly.io, Azure AD client secrets). The span
  grows to the whole contiguous token run on both sides, so a longer token or a ``_old`` suffix
  never leaks its tail (B33). A short prefix (``hf_``, ``dapi``, ``r8_``…) must start a token and
  its body look random (a digit, or both cases mixed; not ``hf_requiredCharacteristicTypes``);
- **Discord bot tokens** (issue 16), found by their shape alone: ``<base64 of a 17-20 digit
  id>.<6>.<25-48>``, the first part decoding to digits, or (issue 45 item 5) the shape the
  secret scanners match, ``[MNO]<23-25>.<6>.<27-38>``, both parts random-looking (not words
  run together); **Telegram bot tokens** ``<5-16 digits>:A<34>`` (also after ``/bot`` in an
  API URL); Discord webhooks also with an API version (``/api/v10/webhooks/…``), Slack
  Workflow Builder and trigger webhooks, Microsoft Teams incoming webhooks (the key after
  ``/IncomingWebhook/``);
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
  In prose, ``the password is hunter2xyz`` / ``was set to `…` ``, ``the ssh password for
  root@host is X``, ``the root pw is X``, ``log in as deploy, password X`` (after a comma or a
  ``login``/``as U``: X needs a digit or a symbol), ``use credentials admin / X`` (issue 16):
  the value goes when it is machine-like (a letter and a digit, or mixed case), not ``the
  password is in the vault``; keytool's ``-storepass``/``-keypass`` take any literal value.
  Also (the review of prose forms) ``the password is: 'X'``, a quoted value right after the
  word (``auth failed for password 'X'``), the value before it (``use X as the password``,
  ``… as the API key``; not ``use it as the password field``), ``passwd X`` / ``pwd X``,
  ``the secret is X``, ``the token is X``, ``the API key is X``, and other languages' words
  (``le mot de passe est X``, ``la contraseña es X``, ``das Passwort ist X``, ``a senha é X``,
  ``la password è X``, ``het wachtwoord is X``). Where plain words are common (``passwd
  root``, ``the secret is out``, ``the token is expired``) the value must look made: upper
  and lower case and a digit, or a symbol such as ``! @ # %`` (``keyed._secret_looking``);
  flags, paths, user names, e-mail addresses, technical terms (``Base64Encoded``) and code
  (``VARCHAR(255)``) stay. A secret key written as the name of a name/value pair in JSON or
  YAML text (``{"name": "DB_PASSWORD", "value": "X"}``, ``- name: API_TOKEN⏎  value: X``)
  redacts the value field after it (``valueFrom`` references stay);
- **entropy near a secret word** (issue 16): among the six words after ``secret``, ``token``,
  ``key``, ``password``, ``credential``… in the same sentence, a token of 20+ characters with
  3.5+ bits of Shannon entropy per character and a digit or well-mixed case (``its secret is
  wJalrXUtnFEMI/K7MDENG…``); never lowercase hex, a UUID, a path or file name, words joined by
  ``_ - . /`` or camelCase, or base64 of plain text;
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
  MariaDB client's glued ``-pS3cret`` (a spaced ``-p`` prompts), ``sshpass -p pw``, ``docker
  login -p TOKEN`` and curl's ``-b/--cookie name=value``;
- **positional keys and files**: a value right after ``aws_secret_access_key``,
  ``_authToken`` or "secret key" (no ``=`` needed), a ``.netrc`` password (``machine H login U
  password P`` on one line or several, ``default login U password P``), a ``Cookie:`` /
  ``Set-Cookie:`` header holding a machine-made value, an Azure SAS ``?sig=…``;
- **PEM private-key blocks** and **``<private>…</private>``** spans (B31), also with
  attributes (``<private reason='x'>``), to the end of the text when unclosed.

The key = value and command-line detectors live in ``continuity.redaction.keyed`` (with ``Finding``
and the value tests both halves share); token shapes, blocks, headers, URLs and the funnel
are here. ``Finding`` stays importable from here.

Kinds: ``openai-key anthropic-key google-api-key google-oauth-token google-oauth-secret
aws-access-key github-token gitlab-token slack-token slack-webhook stripe-key twilio-key
npm-token docker-token huggingface-token sendgrid-key jwt digitalocean-token discord-token
gitlab-token groq-key pypi-token shopify-token linear-key doppler-token postman-key
atlassian-token age-secret-key databricks-token grafana-token vault-token sentry-token
newrelic-key heroku-key square-token supabase-token replicate-token planetscale-token xai-key
perplexity-key flyio-token azure-client-secret discord-webhook telegram-token teams-webhook
bearer-token basic-auth auth-token
url-credential cookie private-key private password token api-key secret credential
base64-credential``.

**Repeats** (a review: ``AWS_SECRET_ACCESS_KEY=V`` redacted, ``bare: V`` further down the
same tool output not): once a value of ``REPEAT_MIN_CHARS`` (8) or more characters is found
to be a secret, every other occurrence of it in the same text goes too, with the same kind of
marker and grown to its whole token run as a token shape is (``xV_old`` goes whole). Shorter
values are not looked for again, so a short common word never becomes a secret everywhere.
The pass runs only when something was found and is linear in the text: a ``str.find`` scan
per value for up to 32 values (a 1 MB text with one secret: +3 ms on ~60), one trie regex of
their 8-character prefixes for more (each hit checked by a dict lookup per value length).

Not redacted (no false positives): paths, git SHAs, UUIDs, content digests, long base64 that no
secret-named key or header introduces (images, signatures), prose that mentions tokens or
passwords. A secret word found inside a run of ``PAYLOAD_RUN_CHARS`` (64) or more base64
characters (``…ZipwVv3e…`` in a PNG) starts no key, prose or header rule (issue 45 item 5); a
secret beside the payload is still found. ``redact`` is idempotent: markers never match a detector.

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

Over 600 lines: the one funnel every outward text passes through: its order of detectors and the
repeat rule must be read together to know what a text loses.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from contextvars import ContextVar

from continuity.core.text import clean
from continuity.redaction.keyed import (
    _HAS_ALPHA,
    _HAS_DIGIT,
    _STEMS,
    CAMEL_WORDS_RE,
    FOREIGN_PASSWORD_WORDS,
    POSITIONAL_KEYS,
    Finding,
    _case_variants,
    _command_password_at,
    _credential_like,
    _is_placeholder,
    _kv_at,
    _user_flag_at,
    _user_pass_at,
    cookie_at,
    cookie_flag_at,
    foreign_prose_at,
    netrc_at,
    positional_at,
)
from continuity.redaction.lazy_re import lazy_compile

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no ``typing`` at start-up (issue 43 goal 3)
    from typing import Any

__all__ = ["Finding", "find_secrets", "redact", "redact_all", "marker", "shown_query"]


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
    (
        "slack-webhook",
        ("hooks.slack.com/services/",),
        r"hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+",
    ),
    # issue 45 item 5: Workflow Builder and trigger webhooks (gitleaks' slack-webhook-url)
    (
        "slack-webhook",
        ("hooks.slack.com/workflows/", "hooks.slack.com/triggers/"),
        r"hooks\.slack\.com/(?:workflows|triggers)/T[A-Za-z0-9_]+(?:/[A-Za-z0-9_]+){2,3}",
    ),
    # also with an API version (``/api/v10/webhooks/…``, issue 45 item 5)
    (
        "discord-webhook",
        ("/webhooks/",),
        r"(?:/api(?:/v\d{1,2})?)?/webhooks/\d{17,20}/[A-Za-z0-9_-]{60,}",
    ),
    # Microsoft Teams incoming webhooks (gitleaks' microsoft-teams-webhook): the key after
    # ``IncomingWebhook/`` goes, the tenant and group ids stay
    ("teams-webhook", ("/IncomingWebhook/",), r"/IncomingWebhook/[A-Za-z0-9]{32}"),
    ("slack-token", ("xox",), r"xox[abeoprs]-[A-Za-z0-9-]{10,}"),
    ("slack-token", ("xapp-",), r"xapp-\d+-[A-Za-z0-9-]{10,}"),
    ("twilio-key", ("SK",), r"SK[0-9a-f]{32}(?![A-Za-z0-9_-])"),
    ("npm-token", ("npm_",), r"npm_[A-Za-z0-9]{36,}"),
    ("docker-token", ("dckr_pat_", "dckr_oat_"), r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{20,}"),
    ("huggingface-token", ("hf_",), r"hf_[A-Za-z0-9]{30,}"),
    ("huggingface-token", ("api_org_",), r"api_org_[A-Za-z0-9]{30,}"),
    ("digitalocean-token", ("dop_v1_", "doo_v1_", "dor_v1_"), r"do[opr]_v1_[a-f0-9]{64}"),
    # shapes after the gitleaks rule set (our own patterns): prefix + body of a known length
    (
        "gitlab-token",
        ("glptt-", "gldt-", "glrt-", "glsoat-", "glcbt-", "glft-", "glimt-"),
        r"gl(?:ptt|dt|rt|soat|cbt|ft|imt)-[A-Za-z0-9_-]{20,}",
    ),
    ("groq-key", ("gsk_",), r"gsk_[A-Za-z0-9]{48,}"),
    ("pypi-token", ("pypi-AgE",), r"pypi-AgE[A-Za-z0-9_-]{50,}"),
    (
        "shopify-token",
        ("shpat_", "shpca_", "shppa_", "shpss_"),
        r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
    ),
    ("linear-key", ("lin_api_",), r"lin_api_[A-Za-z0-9]{40}"),
    ("doppler-token", ("dp.pt.",), r"dp\.pt\.[A-Za-z0-9]{40,}"),
    ("postman-key", ("PMAK-",), r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}"),
    ("atlassian-token", ("ATATT3",), r"ATATT3[A-Za-z0-9_=-]{100,}"),
    ("age-secret-key", ("AGE-SECRET-KEY-1",), r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    ("databricks-token", ("dapi",), r"dapi[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9_])"),
    (
        "grafana-token",
        ("glsa_", "glc_"),
        r"gl(?:sa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|c_[A-Za-z0-9+/]{32,}={0,2})",
    ),
    ("vault-token", ("hvs.", "hvb."), r"hv[sb]\.[A-Za-z0-9_-]{24,}"),
    (
        "sentry-token",
        ("sntrys_eyJ", "sntryu_"),
        r"sntry(?:s_eyJ[A-Za-z0-9+/=_-]{40,}|u_[a-f0-9]{64})",
    ),
    ("newrelic-key", ("NRAK-",), r"NRAK-[A-Z0-9]{27}"),
    ("heroku-key", ("HRKU-",), r"HRKU-[A-Za-z0-9_-]{40,}"),
    ("square-token", ("sq0atp-", "sq0csp-"), r"sq0(?:atp|csp)-[A-Za-z0-9_-]{22,}"),
    ("supabase-token", ("sbp_",), r"sbp_[a-f0-9]{40}"),
    ("replicate-token", ("r8_",), r"r8_[A-Za-z0-9]{37}"),
    (
        "planetscale-token",
        ("pscale_tkn_", "pscale_pw_", "pscale_oauth_"),
        r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,}",
    ),
    ("xai-key", ("xai-",), r"xai-[A-Za-z0-9]{60,}"),
    ("perplexity-key", ("pplx-",), r"pplx-[A-Za-z0-9]{40,}"),
    ("flyio-token", ("fo1_",), r"fo1_[A-Za-z0-9_-]{39,}"),
    ("azure-client-secret", ("Q~",), r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}"),
    ("sendgrid-key", ("SG.",), r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
    ("jwt", ("eyJ",), r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*"),
]
#: anchor -> [(kind, compiled pattern, offset of the pattern's start from the anchor)]
_SHAPE_ANCHORS: dict[str, list[tuple[str, re.Pattern[str], int]]] = {}
for _kind, _anchors, _pattern in _SHAPES:
    for _anchor in _anchors:
        _offset = {"_live_": -2, "_test_": -2, "SPX-": -3, "Q~": -4}.get(_anchor, 0)
        _SHAPE_ANCHORS.setdefault(_anchor, []).append((_kind, lazy_compile(_pattern), _offset))
#: kinds whose short prefix must start a token and whose body must look random (not
#: ``rhf_SponsoredProducts…`` or ``hf_requiredCharacteristicTypes``): kind -> prefix length
_TOKEN_START = {
    "huggingface-token": 3,
    "databricks-token": 4,
    "replicate-token": 3,
    "groq-key": 4,
    "xai-key": 4,
    "flyio-token": 4,
    "supabase-token": 4,
    "perplexity-key": 5,
}
_RUN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_RUN_LEFT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _shape_at(
    text: str, hit: int, shapes: list[tuple[str, re.Pattern[str], int]]
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
        elif kind == "stripe-key" and not _HAS_DIGIT.search(m.group()):  # noqa: SIM114 - own rule
            continue
        elif kind == "twilio-key" and before in _RUN:  # noqa: SIM114 - exactly "SK" + 32 hex, alone
            continue
        elif kind in _TOKEN_START and (
            before in _RUN or not _randomish(m.group()[_TOKEN_START[kind] :])
        ):  # short prefix: alone, random body
            continue
        start, end = m.span()
        if kind in ("discord-webhook", "teams-webhook"):  # the ids stay, the token goes
            start = m.start() + m.group().rindex("/") + 1
            return Finding(start, end, kind, 3)
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


def _randomish(body: str) -> bool:
    """A token body that looks machine-made rather than an identifier: it holds a digit, or
    both letter cases with neither under a sixth of its letters (``hf_`` + 34 random letters,
    not ``requiredCharacteristicTypes``), or it is lowercase hex (a key body like ``dapi…``)."""
    if any(c.isdigit() for c in body):
        return True
    if CAMEL_WORDS_RE.match(body):
        return False
    letters = [c for c in body if c.isalpha()]
    upper = sum(1 for c in letters if c.isupper())
    return bool(letters) and min(upper, len(letters) - upper) * 6 >= len(letters)


#: a Discord bot token: the base64 of the bot's numeric id (a 17 to 20 digit snowflake), a
#: 6-character timestamp and a 25 to 48 character HMAC, joined by dots. It has no literal
#: prefix, so it is found by its middle (``.<6>.``, a fast literal-first scan) and checked
#: outwards; the id must decode to digits.
_DISCORD_MID_RE = lazy_compile(r"\.[A-Za-z0-9_-]{6}\.")
_DISCORD_HEAD = (23, 28)
_DISCORD_TAIL = (25, 48)


def _discord_findings(text: str) -> Iterable[Finding]:
    n = len(text)
    for m in _DISCORD_MID_RE.finditer(text):
        start = m.start()
        while start > 0 and text[start - 1] in _RUN and m.start() - start <= _DISCORD_HEAD[1]:
            start -= 1
        end = m.end()
        while end < n and text[end] in _RUN and end - m.end() <= _DISCORD_TAIL[1]:
            end += 1
        head, tail = m.start() - start, end - m.end()
        if not (
            _DISCORD_HEAD[0] <= head <= _DISCORD_HEAD[1]
            and _DISCORD_TAIL[0] <= tail <= _DISCORD_TAIL[1]
        ):
            continue
        if (
            (start > 0 and text[start - 1] in _RUN_OR_DOT)
            or (end < n and text[end] in _RUN)
            or (text.startswith(".", end) and end + 1 < n and text[end + 1] in _RUN)
        ):
            continue  # part of a longer dotted name (a full stop after it is fine)
        ident = text[start : m.start()]
        import base64  # only now: few texts hold a Discord token's shape (issue 43 goal 3)
        import binascii

        try:
            decoded = base64.urlsafe_b64decode(ident + "=" * (-len(ident) % 4))
        except (ValueError, binascii.Error):
            decoded = b""
        if (17 <= len(decoded) <= 20 and decoded.isdigit()) or _discord_shape(
            ident, text[m.end() : end]
        ):
            yield Finding(start, end, "discord-token", 3)


def _discord_shape(head: str, tail: str) -> bool:
    """A Discord bot token by the shape the secret scanners match (detect-secrets, trufflehog,
    gitleaks: ``[MNO]`` + 23-25 characters, 6, 27-38; issue 45 item 5), when its first part
    does not decode to the bot's id (a token typed or generated by hand): both parts must look
    random (``_randomish``, not words run together)."""
    return (
        head[0] in "MNO"
        and 24 <= len(head) <= 26
        and 27 <= len(tail) <= 38
        and _randomish(head[1:])
        and _randomish(tail)
        and not _wordish(head)
        and not _wordish(tail)
    )


#: letters and ``_ -`` with digits at most at the ends (``MyApplicationNamespace01``)
_WORDISH_RE = lazy_compile(r"\d*(?:[A-Za-z]|_|-)+\d*\Z")
_WORD_RUN_RE = lazy_compile(r"[A-Z]?[a-z]+|[A-Z]+")


def _wordish(part: str) -> bool:
    """``part`` is words run together (``MyApplicationNamespace01``), not random: letters with
    digits only at the ends, in words of 3.5 letters or more on average (random base64 changes
    case every two letters or so)."""
    if not _WORDISH_RE.match(part):
        return False
    words = _WORD_RUN_RE.findall(part)
    return bool(words) and sum(map(len, words)) >= 3.5 * len(words)


#: a Telegram bot token (``123456789:AA…``, gitleaks' telegram-bot-api-token, trufflehog's
#: telegrambottoken; issue 45 item 5): the bot's numeric id, a colon, ``A`` and 34 more
#: characters; also after ``/bot`` in an API URL (``api.telegram.org/bot<token>/getMe``)
_TELEGRAM_RE = lazy_compile(r"\d{5,16}:A[A-Za-z0-9_-]{34}(?![A-Za-z0-9_-])")


def _telegram_findings(text: str) -> Iterable[Finding]:
    at = text.find(":A")
    while at >= 0:
        start = at
        while start > 0 and text[start - 1].isdigit() and at - start <= 16:
            start -= 1
        m = _TELEGRAM_RE.match(text, start) if at - start >= 5 else None
        if m and (
            start == 0 or text[start - 1] not in _RUN_LEFT or text.endswith("/bot", 0, start)
        ):
            yield Finding(start, m.end(), "telegram-token", 3)
        at = text.find(":A", at + 2)


_RUN_OR_DOT = _RUN | {"."}


# ---------------------------------------------------------------------------- blocks

#: a <private> span, also with attributes (``<private reason='x'>``: each ``name=value``, so
#: prose like ``<private or public>`` is no tag); unclosed, it runs to the end of the text,
#: unless the tag is only quoted (``<private>`` in code or docs: a quote, backtick or bracket
#: right after it)
_PRIVATE_RE = lazy_compile(
    r"(?is)<private(?:\s+[\w:.-]+\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s\"'<>]+))*\s*>"
    r"(?:.*?</private\s*>|(?![`'\")\]]).*\Z)"
)
_PEM_RE = lazy_compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
    r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.S,
)


def _block_findings(text: str, pattern: re.Pattern[str], kind: str) -> Iterable[Finding]:
    for m in pattern.finditer(text):
        yield Finding(m.start(), m.end(), kind, 4)


# ---------------------------------------------------------------------------- headers, URLs

_AUTH_RE = lazy_compile(
    r"(?i)authorization\\*[\"']?[ \t]*[:=][ \t]*\\*[\"']?"
    r"(?:(?P<scheme>bearer|basic|token|bot|apikey)[ \t]+)?(?P<val>[A-Za-z0-9._~+/:=-]+)"
)
_BEARER_RE = lazy_compile(r"(?i)bearer[ \t]+(?P<val>[A-Za-z0-9._~+/-]+=*)")
_URL_RE = lazy_compile(
    r"[A-Za-z][A-Za-z0-9+.-]{0,30}://"
    r"(?P<user>[^\s:/?#@\"'<>\[\]]*)(?::(?P<pw>[^\s/?#\"'<>]*))?@(?=[^\s@/?#]*[A-Za-z0-9\]])"
)
#: ``scheme://user:`` and the rest of the URL, for a password holding ``# / ? @`` unescaped
_URL_LOOSE_RE = lazy_compile(
    r"[A-Za-z][A-Za-z0-9+.-]{0,30}://(?P<user>[^\s:/?#@\"'<>\[\]]*):(?P<rest>[^\s\"'<>]{1,300})"
)
_HOST_RE = lazy_compile(r"[A-Za-z0-9.\[\]-]*")
_HOST_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789[")
_SCHEME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-")


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


_SAS_RE = lazy_compile(r"sig=([A-Za-z0-9%+/=_-]{16,})")


def _login_at(text: str, hit: int) -> Finding | None:
    """The password of ``login: admin / X`` or ``login is deploy:X`` (a review found it
    surviving): the user stays, the password after it is taken on the rules of ``credentials
    admin / X`` (``keyed._user_pass_at``: machine-like, or spaced with a symbol; ``admin /
    admin`` and placeholders stay). Only the word ``login`` on its own; ``login`` is not a
    secret key, so ``login=alice`` and ``login: alice`` are left alone."""
    end = hit + 5
    if (hit and text[hit - 1].isalnum()) or (end < len(text) and text[end].isalnum()):
        return None
    return _user_pass_at(text, end)


def _sas_at(text: str, hit: int) -> Finding | None:
    """An Azure SAS signature, ``?sig=…`` or ``&sig=…`` in a URL query (the rest of the
    URL stays)."""
    if hit == 0 or text[hit - 1] not in "?&":
        return None
    m = _SAS_RE.match(text, hit)
    return Finding(m.start(1), m.end(1), "url-credential", 2) if m else None


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
    while at > 0 and (
        at + 1 >= len(rest)
        or rest[at + 1] not in _HOST_START
        or (dotted and "." not in _HOST_RE.match(rest, at + 1).group())
    ):
        at = rest.rfind("@", 0, at)
    if at <= 0:
        return None
    pw = rest[:at]
    if re.split(r"[/?#]", pw, maxsplit=1)[0].isdigit() or _is_placeholder(pw):
        return None
    return Finding(m.start("rest"), m.start("rest") + at, "url-credential", 2)


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
for _key in POSITIONAL_KEYS:
    for _anchor in (
        {*_case_variants(_key), "_authToken"} if _key == "_authtoken" else _case_variants(_key)
    ):
        _HANDLERS.setdefault(_anchor, []).append("positional")
for _word in FOREIGN_PASSWORD_WORDS:
    for _anchor in _case_variants(_word):
        _HANDLERS.setdefault(_anchor, []).append("foreign")
_HANDLERS["machine"] = ["netrc"]
_HANDLERS["default"] = ["netrc"]
_HANDLERS["-b"] = _HANDLERS["--cookie"] = ["cookie-flag"]
for _anchor in _case_variants("cookie:"):
    _HANDLERS.setdefault(_anchor, []).append("cookie")
_HANDLERS["sig="] = ["sas"]
for _anchor in _case_variants("login"):
    _HANDLERS.setdefault(_anchor, []).append("login")
for _anchor in _case_variants("<private"):
    _HANDLERS[_anchor] = ["private"]
#: a longer anchor also runs the handlers of the anchors it starts with ("authorization" ⊃ "auth"),
#: in ``_HANDLERS``' order; found among its own prefixes (linear: the pairwise test of every two
#: anchors cost ~2.5 ms of each process that redacts, issue 43 goal 3)
_ORDER = {lit: i for i, lit in enumerate(_HANDLERS)}
_DISPATCH = {
    lit: [
        h
        for _, prefix in sorted(
            (_ORDER[lit[:k]], lit[:k]) for k in range(1, len(lit) + 1) if lit[:k] in _ORDER
        )
        for h in _HANDLERS[prefix]
    ]
    for lit in _HANDLERS
}
_ANCHOR_RE = lazy_compile(_trie_pattern(_HANDLERS))


#: the detectors that need only the text and where their anchor was found
_AT: dict[str, Callable[[str, int], Finding | None]] = {
    "auth": _auth_at,
    "bearer": _bearer_at,
    "url": _url_at,
    "user": _user_flag_at,
    "command": _command_password_at,
    "netrc": netrc_at,
    "cookie": cookie_at,
    "cookie-flag": cookie_flag_at,
    "sas": _sas_at,
    "login": _login_at,
}


def find_secrets(text: str, known: dict[str, str] | None = None) -> list[Finding]:
    """The secrets in ``text`` as non-overlapping spans in order (overlapping detections are
    merged; the kind is the most specific: block > token shape > header/URL > key = value),
    every other occurrence of a found value too (``_repeats``), and of each value of
    ``known`` (value -> kind: secrets found elsewhere, e.g. in another field of the same
    tool call, ``structured.redact_value``)."""
    found: list[Finding] = []
    seen: set[int] = set()
    blocks: set[str] = set()
    search = _ANCHOR_RE.search
    m = search(text)
    while m:
        hit, lit = m.start(), m.group()
        opaque = lit[0].isalpha() and _in_payload(text, hit, hit + len(lit))
        for handler in _DISPATCH[lit]:
            f: Finding | None = None
            if opaque and handler in _WORD_HANDLERS:
                continue  # "Pw", "key" inside an image's base64: no key, no prose
            if handler == "shape":
                f = _shape_at(text, hit, _SHAPE_ANCHORS[lit])
            elif handler == "kv":
                f = _kv_at(text, hit, seen)
            elif handler in ("positional", "foreign"):
                f = (positional_at if handler == "positional" else foreign_prose_at)(text, hit, lit)
            elif handler in _AT:
                f = _AT[handler](text, hit)
            else:
                blocks.add(handler)
            if f is not None:
                found.append(f)
        m = search(text, hit + 1)  # overlapping: "keyeyJ…" still finds the JWT
    if "." in text:
        found.extend(_discord_findings(text))
    if ":A" in text:
        found.extend(_telegram_findings(text))
    if "pem" in blocks:
        found.extend(_block_findings(text, _PEM_RE, "private-key"))
    if "private" in blocks:
        found.extend(_block_findings(text, _PRIVATE_RE, "private"))
    if not found and not known:
        return []
    merged = _merge(found)
    repeats = _repeats(text, merged, known)
    return _merge(merged + repeats) if repeats else merged


#: handlers that read a word of the text as a key or as prose (``pw``, ``key``, ``login``…):
#: none of them runs on a word found inside a base64 payload (``_in_payload``)
_WORD_HANDLERS = frozenset(
    {"kv", "positional", "foreign", "login", "netrc", "cookie", "auth", "bearer"}
)
#: A run of base64 characters (``A-Z a-z 0-9 + /``) this long is a payload (an image, a
#: file, a signature), not words: issue 45 item 5 found ``…ZipwVv3e…`` in a PNG's base64 read
#: as the key ``pw`` and the rest of the image marked as a password.
PAYLOAD_RUN_CHARS = 64
_B64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def _in_payload(text: str, start: int, end: int) -> bool:
    """``text[start:end]`` (a word found by the anchor scan) lies inside a run of at least
    ``PAYLOAD_RUN_CHARS`` base64 characters (``data:image/png;base64,iVBORw0KG…``, a JSON
    ``"data"`` field): looked at up to that many characters on each side."""
    left = start
    while left > 0 and start - left < PAYLOAD_RUN_CHARS and text[left - 1] in _B64_CHARS:
        left -= 1
    right = end
    n = len(text)
    while right < n and right - left < PAYLOAD_RUN_CHARS and text[right] in _B64_CHARS:
        right += 1
    return right - left >= PAYLOAD_RUN_CHARS and all(c in _B64_CHARS for c in text[start:end])


def _merge(found: list[Finding]) -> list[Finding]:
    """``found`` sorted, overlapping findings merged into one (the kind of the higher
    priority, the first on a tie)."""
    found.sort(key=lambda f: (f.start, -f.end))
    merged: list[Finding] = []
    for f in found:
        if merged and f.start < merged[-1].end:
            last = merged[-1]
            kind = f.kind if f.priority > last.priority else last.kind
            merged[-1] = Finding(
                last.start, max(last.end, f.end), kind, max(last.priority, f.priority)
            )
        else:
            merged.append(f)
    return merged


#: A secret value this long or longer is redacted wherever else it occurs in the same text
#: (module docstring, "Repeats"); a shorter one only where a detector found it.
REPEAT_MIN_CHARS = 8
#: Up to this many distinct values, each is looked for with ``str.find`` (a few fast scans);
#: more, and one trie regex of their first ``REPEAT_MIN_CHARS`` characters finds candidates
#: in one pass, each checked by a dict lookup per value length (linear however many secrets
#: a text holds).
_REPEAT_FIND_MAX = 32


def _repeats(text: str, found: list[Finding], known: dict[str, str] | None = None) -> list[Finding]:
    """Every other occurrence in ``text`` of the value of a finding of ``found`` (sorted,
    merged) at least ``REPEAT_MIN_CHARS`` long, as a finding of the same kind (priority 0:
    where it overlaps a detector's finding, that one's kind wins), grown to the whole token run
    around it (``-pS3cretValue9`` of ``mysql`` keeps its ``-p`` where the detector found it,
    since only occurrences outside the findings grow); ``find_secrets`` merges the overlaps.
    ``known`` adds values found elsewhere (value -> kind)."""
    kinds: dict[str, str] = {}
    for f in found:
        value = text[f.start : f.end].strip()
        if len(value) >= REPEAT_MIN_CHARS:
            kinds.setdefault(value, f.kind)
    for value, kind in (known or {}).items():
        if len(value) >= REPEAT_MIN_CHARS:
            kinds.setdefault(value, kind)
    if not kinds:
        return []
    spans: list[tuple[int, int, str]] = []
    if len(kinds) <= _REPEAT_FIND_MAX:
        for value, kind in kinds.items():
            at = text.find(value)
            while at >= 0:
                spans.append((at, at + len(value), kind))
                at = text.find(value, at + len(value))
    else:
        # prefix -> the lengths of its values, longest first; a candidate is checked with one
        # dict lookup per length, however many values share the prefix
        lengths: dict[str, set[int]] = {}
        for value in kinds:
            lengths.setdefault(value[:REPEAT_MIN_CHARS], set()).add(len(value))
        by_prefix = {p: sorted(ls, reverse=True) for p, ls in lengths.items()}
        search = re.compile(_trie_pattern(by_prefix)).search
        m = search(text)
        while m:
            at = m.start()
            for size in by_prefix[m.group()]:
                kind = kinds.get(text[at : at + size])
                if kind is not None:
                    spans.append((at, at + size, kind))
                    break
            m = search(text, at + 1)
    n = len(text)
    starts = [f.start for f in found]
    out = []
    for start, end, kind in spans:
        i = bisect_right(starts, start) - 1
        if i >= 0 and end <= found[i].end:
            continue  # inside a finding (the finding itself): nothing to add
        while start > 0 and text[start - 1] in _RUN_LEFT:
            start -= 1
        while end < n and text[end] in _RUN:
            end += 1
        out.append(Finding(start, end, kind, 0))
    return out


#: Secrets (value -> kind, each ``REPEAT_MIN_CHARS`` or longer) found in any row or the title
#: of the session an output is showing, set by ``redaction.session.in_session``: ``redact``
#: redacts them wherever they repeat (issue 45 review item 1). None outside such a scope (not a
#: shared ``{}`` default, which one caller's mutation would leak into every context).
SESSION_KNOWN: ContextVar[dict[str, str] | None] = ContextVar(
    "continuity_session_known", default=None
)


def redact(
    text: str, *, known: dict[str, str] | None = None, collect: dict[str, str] | None = None
) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED:<kind>]`` (the module
    docstring lists the detectors and kinds). Text without secrets is returned unchanged (the
    same object); ``redact(redact(t)) == redact(t)``. Lone surrogates (undecodable bytes
    smuggled through a command line or a tool, B43/B45) become U+FFFD first, so the result
    always encodes as UTF-8.

    For the texts of one structured value (``structured.redact_value``): ``known`` (value ->
    kind) are secrets found in its other texts, redacted wherever they occur here too;
    ``collect`` receives each value of ``REPEAT_MIN_CHARS`` or more found here."""
    text = clean(text)
    scope = SESSION_KNOWN.get()
    if scope:  # issue 45 review item 1: secrets found elsewhere in the session being shown
        known = {**scope, **known} if known else scope
    findings = find_secrets(text, known)
    if not findings:
        return text
    if collect is not None:
        for f in findings:
            value = text[f.start : f.end].strip()
            if len(value) >= REPEAT_MIN_CHARS and "[REDACTED:" not in value:
                collect.setdefault(value, f.kind)
    parts: list[str] = []
    pos = 0
    for f in findings:
        parts.append(text[pos : f.start])
        parts.append(marker(f.kind))
        pos = f.end
    parts.append(text[pos:])
    return "".join(parts)


def redact_all(texts: Iterable[str]) -> list[str]:
    """``[redact(t) for t in texts]``: for lists of queries, remembers and snippets."""
    return [redact(t) for t in texts]


#: what a message shows instead of a query that holds a secret
SECRET_QUERY = "<not shown: holds a secret>"


def shown_query(query: str) -> str:
    """``query`` as a message repeats it (``core.text.echoed``: quoted, a long one cut), or
    ``SECRET_QUERY`` when ``redact`` would change it: a message never carries a secret, even
    one the user typed (``search``'s and ``recall``'s "no ... matches", as ``recall``'s
    errors, ``transcripts.memories.error_echo``)."""
    from continuity.core.text import echoed

    return SECRET_QUERY if redact(query) != query else echoed(query)
