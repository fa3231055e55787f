"""Secret detectors keyed on a name: **key = value** (``DB_PASSWORD=…``, ``"apiKey": "…"``,
``--token …``, ``keytool -storepass X``, and a password in prose, ``the password is
hunter2xyz``, ``the ssh password for root@host is X``, ``use credentials admin / X``),
**command lines** (``curl -u user:pass``, ``mysql -pS3cret``, ``sshpass -p pw``) and the
**entropy rule** (``high_entropy_token``: a long random token among the words after a secret
word, ``its secret is wJalrXUtnFEMI/K7MDENG…``; issue 16). Each finds a secret by the key,
flag or command that introduces it, not by its own shape. Split out of ``continuity.redaction.funnel``,
whose module docstring states the rules; ``redact`` stays the one funnel and the only entry
point (callers never use this module directly).

Also owns what both modules' detectors share: ``Finding`` (re-exported by ``continuity.redaction.funnel``)
and the value tests, ``_is_placeholder`` (``$VAR``, ``<token>``, ``***``…) and
``_credential_like`` (machine-made). Entry points for ``continuity.redaction.funnel``'s dispatch:
``_STEMS`` (the literal anchors of key checks), ``_kv_at``, ``_user_flag_at``,
``_command_password_at``. Imports only the standard library; never ``continuity.redaction.funnel``.

Over 600 lines: every detector keyed on a name (key = value, flags, prose passwords, name/value
pairs) shares the key vocabulary and the value tests (``_secret_looking``,
``_credential_like``); split, the vocabulary would be imported everywhere.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from continuity.redaction.lazy_re import lazy_compile


@dataclass(frozen=True, slots=True)
class Finding:
    """A secret at ``text[start:end]`` (character offsets) of kind ``kind``."""

    start: int
    end: int
    kind: str
    priority: int = 1


_HAS_DIGIT = lazy_compile(r"\d")
_HAS_ALPHA = lazy_compile(r"[A-Za-z]")


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


# ---------------------------------------------------------------------------- key = value

#: words that make a key secret on their own
_SECRET_WORDS = {
    "password": "password",
    "passwd": "password",
    "pwd": "password",
    "pass": "password",
    "passphrase": "password",
    "passcode": "password",
    "pw": "password",
    # German (``Passwort=…``, ``das Passwort ist X``); other languages' words are prose only
    "passwort": "password",
    "kennwort": "password",
    # keytool's and jarsigner's password flags (``-storepass X``), openssl's ``-passin``
    "storepass": "password",
    "keypass": "password",
    "srcstorepass": "password",
    "deststorepass": "password",
    "srckeypass": "password",
    "destkeypass": "password",
    "secret": "secret",
    "creds": "credential",
    "token": "token",
    "credential": "credential",
    "credentials": "credential",
    "apikey": "api-key",
    "privatekey": "private-key",
    "accesskey": "api-key",
    "secretkey": "secret",
}
#: flags whose spaced value is a literal password, even a plain word (``-storepass changeit``)
_PASSWORD_FLAGS = {
    "storepass",
    "keypass",
    "srcstorepass",
    "deststorepass",
    "srckeypass",
    "destkeypass",
}
#: when a key holds several secret words (``x-auth-token``), the most specific kind wins
_KIND_ORDER = ("password", "private-key", "token", "api-key", "credential", "secret")
#: words before a final ``key`` that make it secret (``api_key``, ``AccountKey``…)
_KEY_QUALIFIERS = {
    "api",
    "access",
    "secret",
    "private",
    "account",
    "storage",
    "signing",
    "encryption",
    "master",
    "subscription",
    "app",
    "auth",
    "client",
    "service",
    "webhook",
    "shared",
    "license",
    "deploy",
    "admin",
    "consumer",
}
#: words that mark a key as metadata about a secret, not the secret itself
_MODIFIERS = {
    "count",
    "counts",
    "limit",
    "limits",
    "max",
    "min",
    "len",
    "length",
    "size",
    "type",
    "types",
    "url",
    "uri",
    "urls",
    "endpoint",
    "path",
    "paths",
    "file",
    "files",
    "filename",
    "dir",
    "name",
    "names",
    "id",
    "ids",
    "expires",
    "expiry",
    "expiration",
    "exp",
    "ttl",
    "usage",
    "budget",
    "hint",
    "policy",
    "prompt",
    "field",
    "fields",
    "label",
    "env",
    "var",
    "header",
    "param",
    "mode",
    "format",
    "regex",
    "pattern",
    "required",
    "enabled",
    "rotation",
    "kind",
    "ref",
    "prefix",
    "suffix",
    "index",
    "num",
    "number",
    "total",
    "used",
    "remaining",
    "cost",
    "window",
    "helper",
    "manager",
    "store",
    "provider",
    "source",
    "location",
    "command",
    "cmd",
    "version",
    "method",
    "scheme",
    "algorithm",
    "alg",
    "lifetime",
    "timeout",
    "retry",
    "cache",
    "is",
    "has",
    "reset",
    "strength",
    "input",
    "placeholder",
    "validator",
    "estimate",
    "tokens",
    "in",
    "out",
    "output",
    "rate",
    "pos",
    "position",
    "start",
    "end",
    "class",
    "fingerprint",
    "generation",
    "ms",
    "sec",
    "secs",
    "seconds",
    "time",
    "at",
    "date",
    "first",
    "last",
}
#: literal stems whose hits start a key check (lower, Capitalized and UPPER forms)
_STEMS = tuple(
    v
    for w in ("pass", "pwd", "pw", "secret", "token", "key", "credential", "creds", "auth")
    for v in _case_variants(w)
)
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_WORD_RE = lazy_compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_SEP_RE = lazy_compile(r"(\\*[\"'])?([ \t]*)(=>|:=|=(?!=)|:(?![:/\\]))([ \t]*)")
_FLAG_SEP_RE = lazy_compile(r"[ \t]+(?=[^\s-])")
_QUOTED_RE = {
    '"': lazy_compile(r'"((?:[^"\\\n]|\\[^"\n])*)"'),
    "'": lazy_compile(r"'([^'\\\n]*)'"),
}
_PROSE_KEY_RE = lazy_compile(r"(?i)pass(?:w|phrase|code)|\Apwd?\Z|kennwort")
#: the verb between a secret word and its value in prose: English ``is``/``was`` and the
#: French, Spanish, German, Portuguese, Italian and Dutch ones (``le mot de passe est X``,
#: ``la contraseña es X``, ``das Passwort ist X``/``lautet X``, ``a senha é X``, ``la password
#: è X``, ``het wachtwoord is X``)
COPULA = (
    r"(?:is|was|est|était|es|era|será|sera|ist|war|lautet|é|è|foi)"
    r"(?:[ \t]+(?:now|still|set[ \t]+to|changed[ \t]+to|maintenant|ahora|jetzt|agora|ora"
    r"|nu))?"
)
#: ``is`` / ``was`` (``is:``, ``is =``) after a password word, also after what it is for (``the
#: ssh password for root@host is X`` or ``… for root@host: X``, up to three words after
#: ``for``/``of``/``on``/``at``)
_PROSE_RE = lazy_compile(
    rf"(?:[ \t]+(?:for|of|on|at)(?:[ \t]+(?!{COPULA}\b)[^\s:]{{1,80}}){{1,3}}?"
    rf"(?::|(?=[ \t]+{COPULA}\b)))?"
    rf"(?:[ \t]+{COPULA}(?:[ \t]*[:=](?![:=/])[ \t]*|[ \t]+)(?=[^\s])"
    r"|(?<=:)[ \t]*(?=[^\s]))"
)
#: a quoted value right after a secret word (``auth failed for password 'X'``)
_SPACED_QUOTE_RE = lazy_compile(r"[ \t]+(?=[\"'`])")
#: password words whose spaced bare value is taken without ``is`` (``passwd Xk9#mLq2vB``),
#: when it looks made (``_secret_looking``; ``passwd root``, ``pwd /home/dev`` stay)
_SPACED_PASSWORD_KEYS = frozenset({"passwd", "pwd", "password", "passphrase"})
#: secret words (besides the password words) whose value prose names with ``is``: ``the secret
#: is X``, ``the token is X`` (also ``the API key is X``, found from ``key``)
_PROSE_SECRET_KEYS = frozenset({"secret", "token"})
#: password words that are also commands (``passwd alice``, ``pwd``): their spaced value never
#: goes by the comma rule of ``log in as deploy, password X``, only when it looks made
_COMMAND_WORDS = frozenset({"passwd", "pwd"})
#: capitals and digits joined by ``_`` (``MY_TOKEN_2024``, ``2024_PROD``): a name, not a value
_CAPS_NAME_RE = lazy_compile(r"[A-Z0-9]+(?:_[A-Z0-9]+)+\Z")
#: ``log in as deploy, password X``: a password word right after a comma or ``;`` (or a
#: ``login U`` / ``user U`` / ``as U``), its value after a space
_CLAUSE_BEFORE_RE = lazy_compile(
    r"(?:[,;(][ \t]*|(?:\blog[ \t]?in|\bsign[ \t]in|\buser(?:name)?|\bas)[ \t]+\S+[ \t]+"
    r"(?:(?:with|and|using)[ \t]+)?)\Z",
    re.I,
)
#: ``credentials admin / X``, ``creds are admin:X``: a user and a password after the word
_USER_PASS_RE = lazy_compile(
    r"(?:[ \t]+(?:are|is))?[ \t]*:?[ \t]+[\"'`]?(?P<user>[A-Za-z0-9_.@-]{1,64})"
    r"(?:[ \t]*/[ \t]*|:)(?P<pw>[^\s\"'`]{1,128})"
)
_OPEN_QUOTE_RE = lazy_compile(r"\\*[\"']")
_UNQUOTED_RE = lazy_compile(r"(?:[^\s\"'`\\,;&<>|]|&(?![A-Za-z_][\w.-]*=))+")
_CODE_RE = lazy_compile(r"[a-z_][A-Za-z_]*(?:\.[A-Za-z_]\w*)*\Z|[A-Za-z_][\w.]*[(\[]|[\[({]")
_TYPE_RE = lazy_compile(r"(?:[A-Za-z_]+|(?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*)(?:\[[\w\[\], .|]*\])?\Z")
_PLACEHOLDER_WORDS = {
    "null",
    "none",
    "nil",
    "true",
    "false",
    "undefined",
    "empty",
    "redacted",
    "hidden",
    "masked",
    "required",
    "optional",
    "string",
    "str",
    "bool",
    "int",
    # a value that only names what it stands for (docs, mapping tables): user:pass@host
    "password",
    "passwd",
    "pass",
    "pwd",
    "secret",
    "token",
    "apikey",
    "api_key",
    "api-key",
    "key",
    "credential",
    "credentials",
    "private-key",
    "auth",
    "basic",
    "bearer",
    "digest",
}


_ALNUM_RUN_RE = lazy_compile(r"[A-Za-z0-9]{8,}")
_HAS_ALNUM = lazy_compile(r"[A-Za-z0-9]")
#: lowercase words joined by ``_`` (``created_at_desc_2024``): a setting, not a secret
_SNAKE_WORDS_RE = lazy_compile(r"(?:[a-z]+|\d+)(?:_(?:[a-z]+|\d+))+\Z")
#: a directory: the shell's ``PWD=/home/dev``, ``OLDPWD=~/src`` (not ``MYSQL_PWD=/x``)
_DIR_RE = lazy_compile(r"~?/[\w./~-]*\Z")
_FORMAT_RE = lazy_compile(r"%[sd(]|\{[A-Za-z_0-9]*\}")
_WORD_ONLY_RE = lazy_compile(r"[A-Za-z_]+\Z")
#: an ALL_CAPS variable name (``ANTHROPIC_AUTH_TOKEN``) or a colour (``#cccccc``)
_NAME_RE = lazy_compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|#[0-9A-Fa-f]{3,8}")
#: a reference or template, not a value: $VAR ${VAR} $(cmd) %s %(name)s %VAR% <name> {name}
_TEMPLATE_RE = lazy_compile(
    r"\$[A-Za-z_{(].*|%[sd]|%\(\w+\)[sd]|%\w+%|<[^<>]*>|\{\{?[^{}]*\}?\}", re.S
)


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


_B64_RE = lazy_compile(r"[A-Za-z0-9+/]{16,}={0,2}\Z")
_B64_ANY_RE = lazy_compile(r"[A-Za-z0-9+/]+={0,2}\Z")


def _value_kind(value: str, key_kind: str) -> str:
    """``base64-credential`` for a base64 blob (padding, ``+``/``/``, or a whole number of
    quads mixing cases and digits), else the key's kind."""
    if _B64_RE.match(value) and (
        "=" in value
        or "+" in value
        or "/" in value
        or (
            len(value) % 4 == 0
            and value.lower() != value
            and value.upper() != value
            and _HAS_DIGIT.search(value)
        )
    ):
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
    while value and (
        value[-1] in ".:"
        or (
            value[-1] in ")]}"
            and value.count(value[-1]) > value.count("([{"[")]}".index(value[-1])])
        )
    ):
        value = value[:-1]
    return value


def _kv_value(
    text: str, pos: int, *, tight: bool, flag: bool, env: bool, kind: str, assign: bool = False
) -> tuple[int, int] | None:
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
        value = text[span[0] : span[1]]
        if (
            _is_placeholder(value)
            or (_FORMAT_RE.search(value) and not _credential_like(_FORMAT_RE.sub("", value)))
            or (assign and _WORD_ONLY_RE.match(value))
        ):
            return None
        return span
    value = _unquoted_value(text, pos)
    if len(value) < 4 or _is_placeholder(value) or (value.isdigit() and kind != "password"):
        return None
    if not (tight and env) and _CODE_RE.match(value):
        return None
    if not (tight or flag or env or _credential_like(value)) or (
        not tight and not flag and _TYPE_RE.match(value)
    ):
        return None
    return pos, pos + len(value)


def _env_double_equals(text: str, ke: int, kind: str, weak: bool) -> Finding | None:
    """The value of ``NAME==value`` (env form): everything after the first ``=``."""
    span = _kv_value(text, ke + 1, tight=True, flag=False, env=True, kind=kind)
    if not span or (weak and not _credential_like(text[span[0] : span[1]])):
        return None
    return Finding(span[0], span[1], _value_kind(text[span[0] : span[1]], kind), 1)


#: ``api key: X`` / ``API key = X``: the separator after the two words (issue 45 review item
#: 3); ``api key X`` / ``api key is X``: spaces alone (group ``bare``, issue 45 leftover)
_API_KEY_SEP_RE = lazy_compile(
    r"[ \t]*(?::(?![:/\\])|=(?!=))[ \t]*(?=\S)|(?P<bare>[ \t]+(?:is[ \t]+)?)(?=\S)", re.I
)


def _api_key_sep_at(text: str, ke: int) -> Finding | None:
    """The value of ``api key: X`` (``key`` ending at ``ke``, ``api `` before it), as
    ``api-key``: a quoted value by the rule of a quoted key value (``_kv_value``), a bare one
    only when it looks made (``_secret_looking``: ``Hotel9secretZ``; not ``api key: none``,
    ``api key: see below``). Issue 45 review item 3. Without a ``:`` or ``=`` (``api key
    Hotel9secretZ``, ``the api key is Hotel9secretZ``) the value must look made even when
    quoted (``api key "rotation"`` is prose)."""
    sep = _API_KEY_SEP_RE.match(text, ke)
    if sep is None:
        return None
    span = _kv_value(text, sep.end(), tight=False, flag=False, env=False, kind="api-key")
    if span is None:
        return None
    value = text[span[0] : span[1]]
    quoted = text[sep.end()] in "'\"`" and sep.group("bare") is None
    if not quoted and not _secret_looking(value):
        return None
    return Finding(span[0], span[1], _value_kind(value, "api-key"), 1)


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
    ke = ks + len(raw)
    if named is None:  # "the API key is …": a bare "key" names a secret only by its value
        if key.lower() != "key":
            return None
        if text[max(ks - 4, 0) : ks].lower() == "api " and (
            found := _prose_at(text, ke, ks, kind="api-key", strict=True)
            or _api_key_sep_at(text, ke)
            or _value_before(text, ks, ke, "api-key")
        ):
            return found
        return _entropy_near(text, ke, "secret")
    kind, weak = named
    env = key.upper() == key and any(c.isalpha() for c in key)
    sep = _SEP_RE.match(text, ke)
    if sep is None and env and text.startswith("==", ke):
        # ``NAME==value`` in env form assigns "=value" (a comparison is spaced or lower case).
        return _env_double_equals(text, ke, kind, weak)
    if sep:
        tight = not sep.group(2) and not sep.group(4)
        if weak and key.upper() == key and not (tight and sep.group(3) == "="):
            return None
        span = _kv_value(
            text,
            sep.end(),
            tight=tight,
            flag=flag,
            env=env,
            kind=kind,
            assign=not tight and sep.group(3) == "=",
        )
        if weak and span and _weak_value_plain(text[span[0] : span[1]]):
            return None
    elif flag and (fs := _FLAG_SEP_RE.match(text, ke)):
        if key.lower() in _PASSWORD_FLAGS:  # keytool -storepass changeit: a literal password
            span = _arg_span(text, fs.end())
            if span and not _literal_password(text[span[0] : span[1]]):
                span = None
        else:
            span = _kv_value(text, fs.end(), tight=False, flag=True, env=False, kind=kind)
    else:
        found = _pair_value_at(text, ks, ke, kind, weak)
        low = key.lower()
        if found:
            pass
        elif (_PROSE_KEY_RE.search(key) or low in _PROSE_SECRET_KEYS) and _marker_before(text, ks):
            return None  # "use [REDACTED:password] as the password …": redacted already
        elif _PROSE_KEY_RE.search(key):  # "use X as the password": X first, by the grammar
            found = _value_before(text, ks, ke, "password") or _prose_at(
                text, ke, ks, spaced=low in _SPACED_PASSWORD_KEYS, clause=low not in _COMMAND_WORDS
            )
        elif low in _PROSE_SECRET_KEYS:
            found = _value_before(text, ks, ke, kind) or _prose_at(
                text, ke, ks, kind=kind, strict=True
            )
        elif kind == "credential":
            found = _user_pass_at(text, ke)
        return found or (None if weak else _entropy_near(text, ke, kind))
    if sep:
        # "use X as the password :" (or ": 0", ": Y"): the value named before the word is the
        # password by the sentence's grammar, whatever follows the separator (hypothesis
        # cases of the corpus); without one, the separator's value stands
        low = key.lower()
        if (_PROSE_KEY_RE.search(key) or low in _PROSE_SECRET_KEYS) and _marker_before(text, ks):
            return None  # the value the sentence names was redacted already
        before = (
            _value_before(text, ks, ke, "password")
            if _PROSE_KEY_RE.search(key)
            else _value_before(text, ks, ke, kind)
            if low in _PROSE_SECRET_KEYS
            else None
        )
        if before is not None:
            return before
    if not span or (key.lower() in ("pwd", "oldpwd") and _DIR_RE.match(text[span[0] : span[1]])):
        return None
    return Finding(span[0], span[1], _value_kind(text[span[0] : span[1]], kind), 1)


#: a secret key written as the name of a name/value pair, in JSON or YAML text (``{"name":
#: "DB_PASSWORD", "value": "…"}``, ``- name: DB_PASSWORD⏎  value: …``): what comes before the
#: key, and what joins it to its value field (``structured.PAIR_*_KEYS`` for objects)
#: (issue 45 item 5: any field whose last word is name/key/variable/var names it, ``secretName``,
#: ``envName``, ``variable_name``; any ending in value/val holds it, ``secretValue``; on one
#: line too, ``secretName=X value=Y``)
_PAIR_NAME_BEFORE_RE = lazy_compile(
    r"(?<![A-Za-z0-9_])[\"']?[A-Za-z0-9_]*(?:name|Name|NAME|key|Key|KEY|variable|Variable|var|Var)"
    r"[\"']?[ \t]*[:=][ \t]*[\"']?\Z"
)
_PAIR_VALUE_AFTER_RE = lazy_compile(
    r"[\"']?[ \t]*(?:,[ \t]*(?:\r?\n[ \t]*)?|\r?\n[ \t]*|[ \t]+)"
    r"[\"']?[A-Za-z0-9_]*(?:value|Value|VALUE|val|Val)[\"']?[ \t]*[:=][ \t]*"
)


def _pair_value_at(
    text: str, key_start: int, key_end: int, kind: str, weak: bool
) -> Finding | None:
    """The value of a name/value pair in JSON or YAML text whose name is the secret key at
    ``text[key_start:key_end]`` (``{"name": "DB_PASSWORD", "value": "X"}``, a Kubernetes env
    list in YAML): the value field right after it goes by the rule of an env value
    (``_kv_value``); ``valueFrom`` references and plain words stay."""
    if not _PAIR_NAME_BEFORE_RE.search(text, max(key_start - 40, 0), key_start):
        return None
    m = _PAIR_VALUE_AFTER_RE.match(text, key_end)
    if not m or m.end() >= len(text):
        return None
    span = _kv_value(text, m.end(), tight=False, flag=False, env=True, kind=kind)
    if (
        not span
        or (weak and _weak_value_plain(text[span[0] : span[1]]))
        or (
            text[key_start:key_end].lower() in ("pwd", "oldpwd")
            and _DIR_RE.match(text[span[0] : span[1]])
        )
    ):
        return None
    return Finding(span[0], span[1], _value_kind(text[span[0] : span[1]], kind), 1)


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


#: a quoted passphrase: two to twelve words of letters, digits and punctuation, no braces or
#: template marks, ``PASSPHRASE_MIN_CHARS`` or more in all (issue 45 review item 3:
#: ``password is "spaced secret phrase here"``)
PASSPHRASE_MIN_CHARS = 8
_PASSPHRASE_RE = lazy_compile(r"[^\s{}<>$%]+(?:[ ][^\s{}<>$%]+){1,11}\Z")


def _passphrase(value: str) -> bool:
    """``value`` (quoted after ``password is``) is a passphrase of words (``correct horse
    battery staple``), not a placeholder (``<your password>``, ``your password here``)."""
    return (
        len(value) >= PASSPHRASE_MIN_CHARS
        and bool(_PASSPHRASE_RE.match(value))
        and not _is_placeholder(value)
        and "your " not in value.lower()
    )


def _prose_at(
    text: str,
    pos: int,
    key_start: int,
    *,
    kind: str = "password",
    strict: bool = False,
    spaced: bool = False,
    clause: bool = True,
) -> Finding | None:
    """The secret in prose after a secret word ending at ``pos`` (the word starting at
    ``key_start``), as ``kind``: ``… password is hunter2xyz``, ``password was set to `S3cret!x`
    ``, ``the password is: 'X'``, ``the ssh password for root@host is X``, ``the root pw is X``,
    ``log in as deploy, password X`` (issue 16; with ``clause``), ``auth failed for password 'X'`` (a quoted value
    right after the word), ``le mot de passe est X`` (``COPULA``), when the value is
    machine-like (``_machine_like``; with ``strict``, for ``the secret is X`` / ``the token is
    X``, it must look made, ``_secret_looking``). With ``spaced`` (``passwd``, ``pwd``…) a bare
    value right after the word goes too when it looks made (``passwd Xk9#mLq2vB``; not ``passwd
    root``, ``passwd -l alice``, ``pwd /home/dev``). A path (``/…``, ``~/…``, ``./…``) is never
    a password here."""
    m = _PROSE_RE.match(text, pos)
    bare = m is None
    if m:
        at = m.end()
    elif m := _SPACED_QUOTE_RE.match(text, pos):
        at, bare = m.end(), False
    elif (
        clause
        and not strict
        and (
            _CLAUSE_BEFORE_RE.search(text[max(key_start - 80, 0) : key_start])
            and (m := _SPACED_RE.match(text, pos))
        )
    ):
        at = m.end()
    elif spaced and (m := _SPACED_RE.match(text, pos)) and text[m.end()] not in "'\"`":
        u = _UNQUOTED_RE.match(text, m.end())
        value = u.group().rstrip(_TRAILING) if u else ""
        word = text[key_start:pos].lower()
        if _secret_looking(value) or (word in _SPACED_LOWER_KEYS and _lower_mixed(value)):
            return Finding(m.end(), m.end() + len(value), kind, 1)
        return None
    else:
        return None
    span = _quoted_span(text, at) if text[at] in "'\"" else None
    if text[at] == "`":
        close = text.find("`", at + 1, at + 200)
        span = (at + 1, close) if close > at + 1 else None
    elif span is None:
        u = _UNQUOTED_RE.match(text, m.end())
        span = (m.end(), m.end() + (len(u.group().rstrip(_TRAILING)) if u else 0))
    if (
        span is not None
        and kind == "password"
        and text[at] in "'\"`"
        and _passphrase(text[span[0] : span[1]])
    ):
        return Finding(span[0], span[1], kind, 1)  # issue 45 review item 3
    if (
        span is None
        or not _machine_like(value := text[span[0] : span[1]])
        or _digest_like(value)
        or _plain_base64(value)
        or value.startswith(_PATH_STARTS)
    ):
        return None
    if strict and not _secret_looking(value):
        return None
    if CAMEL_WORDS_RE.match(value) or _CAPS_NAME_RE.match(value):
        return None  # words run together (``requiredCharacteristic``, ``MY_TOKEN_2024``): a name
    if bare and (
        CAMEL_WORDS_RE.match(value)
        or _words_joined(value)
        or _TYPE_CALL_RE.match(value)
        or not ((_HAS_DIGIT.search(value) and _HAS_ALPHA.search(value)) or not value.isalnum())
    ):
        return None  # ", password X" without "is": X needs a digit or a symbol, not code
        # ("(password VARCHAR(255)" in a table definition)
    return Finding(span[0], span[1], kind, 1)


_PATH_STARTS = ("/", "~/", "./", "../")
#: password words after which a bare lower-case value of letters and digits is taken too
#: (``password hunter2xyz9``: fresh-user review, issue 40); not the commands ``passwd``/``pwd``,
#: whose argument is a user name
_SPACED_LOWER_KEYS = frozenset({"password", "passphrase"})


def _lower_mixed(value: str) -> bool:
    """``hunter2xyz9``: 8-64 letters and digits, at least 3 letters and 2 digits, not a
    technical term (``sha256sum``, ``utf8mb4x``), a digest nor base64 of plain text
    (``dGhlIGJ1aWxk…``, issue 45 item 5: base64 is no password)."""
    if not (8 <= len(value) <= 64 and value.isascii() and value.isalnum()):
        return False
    digits = sum(c.isdigit() for c in value)
    return (
        digits >= 2
        and len(value) - digits >= 3
        and not _TECH_WORD_RE.search(value)
        and not _digest_like(value)
        and not _plain_base64(value)
    )


#: a type or call written with letters only before its bracket (``VARCHAR(255)``, ``str[``)
_TYPE_CALL_RE = lazy_compile(r"[A-Za-z_]+[(\[]")
#: symbols that a written word or name never holds but a made password often does
_STRONG_SYMBOL_RE = lazy_compile(r"[!@#$%^&*+~]")
#: technical words that make a mixed token a term, not a secret, at its start or after a
#: ``- _ .`` (``Base64Encoded``, ``SHA256-hashed``, ``utf8mb4-safe``)
_TECH_WORD_RE = lazy_compile(
    r"(?i)(?:\A|[-_.])(?:base(?:32|58|64)|sha-?\d|md5|utf-?(?:8|16)|aes-?\d|rsa-?\d|x86|arm64"
    r"|u?int\d|float\d)"
)
_BRACKET_RE = lazy_compile(r"[(\[{]")
_EMAIL_RE = lazy_compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+\Z")


def _secret_looking(value: str) -> bool:
    """A bare value that looks made, for the places where words are also common (``passwd
    X``, ``the secret is X``, ``use X as the API key``): 8-128 characters, a letter, and either
    upper case, lower case and a digit (``PwdSpaceSecret77``, ``Tok3n-Value9``) or a symbol
    such as ``! @ # $ % & * + ~`` (``Xk9#mLq2vB``); never a flag, path, ``$VAR``, file name,
    digest, e-mail address, code (``VARCHAR(255)``, ``get_token()``: only the part before a
    bracket counts), base64 of plain text or a technical term (``Base64Encoded``). ``user01``,
    ``root``, ``out``, ``expired`` are not."""
    value = _BRACKET_RE.split(value, 1)[0]
    if not 8 <= len(value) <= 128 or value[0] in "-/~.$" or "/" in value:
        return False
    if (
        _is_placeholder(value)
        or not _HAS_ALPHA.search(value)
        or _FILE_RE.match(value)
        or (
            _digest_like(value)
            or _EMAIL_RE.match(value)
            or _TECH_WORD_RE.search(value)
            or _plain_base64(value)
        )
    ):
        return False
    if _STRONG_SYMBOL_RE.search(value):
        return True
    return bool(_HAS_DIGIT.search(value)) and value.lower() != value and value.upper() != value


#: ``use X as the password``, ``set X as the root password``, ``X as the API key``: the value
#: before ``as`` (optionally ``the``/``a``/``my``… and one more word) right before the key word
#: what joins the value to the secret word after it: `` as the ``, `` as your new ``
_AS_TAIL = (
    r"[ \t]+as[ \t]+"
    r"(?:(?:the|a|an|my|your|our|its|their|his|her|new)[ \t]+)?(?:[A-Za-z][\w-]{0,15}[ \t]+)?\Z"
)
_AS_BEFORE_RE = lazy_compile(
    r"(?:(?<=[\s(\[\"'`,;<>])|\A)([\"'`]?)(?P<val>[^\s\"'`,;()\[\]<>]{6,128}?)\1" + _AS_TAIL,
    re.I,
)
#: ``use [REDACTED:password] as the password``: the value the sentence names, redacted already
_AS_MARKER_BEFORE_RE = lazy_compile(r"\[REDACTED:[\w-]+\]" + _AS_TAIL, re.I)
#: the word after ``… as the password`` that makes it a thing, not the secret itself (``use
#: it as the password field``, ``use argon2 as the password hash``)
_AS_NOUNS = frozenset(
    {
        "hash",
        "hasher",
        "hashing",
        "salt",
        "column",
        "attribute",
        "property",
        "parameter",
        "argument",
        "arg",
        "option",
        "flag",
        "variable",
        "box",
        "reset",
        "manager",
        "generator",
        "check",
        "encoding",
        "storage",
        "algorithm",
        "backend",
        "value",
        "key",
        "policy",
        "rule",
        "rules",
    }
)
_NEXT_WORD_RE = lazy_compile(r"[ \t]+([A-Za-z]+)")


def _marker_before(text: str, key_start: int) -> bool:
    """Whether the value named before the secret word at ``key_start`` is a redaction marker
    (``Use [REDACTED:password] as the password 00000A``): the sentence's secret was redacted
    already, so no word after the key is its value. Without this a second ``redact`` took the
    word after the key, which the first had left because the value before it came first
    (found by the property test: ``redact`` must give the same text again)."""
    return bool(_AS_MARKER_BEFORE_RE.search(text, max(key_start - 200, 0), key_start))


def _value_before(text: str, key_start: int, key_end: int, kind: str) -> Finding | None:
    """The value named before the secret word at ``text[key_start:key_end]``: ``Use X as the
    password``, ``X as password``, ``use X as the API key``. A ``password`` value must be
    machine-like (``_machine_like``; not a technical term, words joined, a name, a file or a
    path); other
    kinds must look made (``_secret_looking``). A noun after the word (``as the password
    field``, ``… hash``) makes it no value."""
    if " as " not in text[max(key_start - 40, 0) : key_start].lower().replace("\t", " "):
        return None
    nxt = _NEXT_WORD_RE.match(text, key_end)
    if nxt and nxt.group(1).lower() in (_AS_NOUNS | _MODIFIERS):
        return None
    m = _AS_BEFORE_RE.search(text, max(key_start - 200, 0), key_start)
    if not m:
        return None
    value = m.group("val")
    if not m.group(1):
        value = value.rstrip(_TRAILING)
    if kind == "password":
        ok = (
            _machine_like(value)
            and not _TECH_WORD_RE.search(value)
            and not _words_joined(value)
            and not value.startswith(_PATH_STARTS)
            and not _digest_like(value)
            and not _FILE_RE.match(value)
            and not CAMEL_WORDS_RE.match(value)
            and not _CAPS_NAME_RE.match(value)
        )
    else:
        ok = _secret_looking(value)
    if not ok:
        return None
    return Finding(m.start("val"), m.start("val") + len(value), kind, 1)


#: other languages' words for password whose value prose names (a small list; ``Passwort``
#: and Italian ``password è`` are keys, found by the key check): French, Spanish, Portuguese
#: (Brazil and Portugal), Dutch, German
FOREIGN_PASSWORD_WORDS = (
    "mot de passe",
    "contraseña",
    "contrasena",
    "senha",
    "palavra-passe",
    "wachtwoord",
    "kennwort",
)
_FOREIGN_SEP_RE = lazy_compile(
    rf"[ \t]+{COPULA}(?:[ \t]*:[ \t]*|[ \t]+)(?=[^\s])|[ \t]*:[ \t]*(?=[^\s])"
)


def foreign_prose_at(text: str, hit: int, anchor: str) -> Finding | None:
    """The password after another language's word for it at ``hit`` (``anchor`` as found,
    ``FOREIGN_PASSWORD_WORDS``): ``le mot de passe est X``, ``la contraseña es X``, ``a senha
    é X``, ``het wachtwoord is X``, ``mot de passe : X``, when X is machine-like (the English
    rule of ``_prose_at``: ``le mot de passe est incorrect`` stays)."""
    end = hit + len(anchor)
    if (hit > 0 and text[hit - 1].isalpha()) or (end < len(text) and text[end].isalpha()):
        return None
    m = _FOREIGN_SEP_RE.match(text, end)
    if not m:
        return None
    at = m.end()
    if text[at] == "`":
        close = text.find("`", at + 1, at + 200)
        span = (at + 1, close) if close > at + 1 else None
    elif text[at] in "'\"":
        span = _quoted_span(text, at)
    else:
        u = _UNQUOTED_RE.match(text, at)
        span = (at, at + (len(u.group().rstrip(_TRAILING)) if u else 0))
    if (
        span is None
        or not _machine_like(value := text[span[0] : span[1]])
        or _digest_like(value)
        or _plain_base64(value)
        or value.startswith(_PATH_STARTS)
        or (CAMEL_WORDS_RE.match(value) or _CAPS_NAME_RE.match(value))
    ):
        return None
    return Finding(span[0], span[1], "password", 1)


def _digest_like(value: str) -> bool:
    """A git SHA or content digest (40 or 64 lowercase hex) or a UUID: an id, not a password."""
    return bool(_UUID_RE.match(value) or (len(value) in (40, 64) and _LOWER_HEX_RE.match(value)))


_SPACED_RE = lazy_compile(r"[ \t]+(?=[^\s])")
#: what ends a bare value in prose: sentence punctuation and brackets of the text around it
_TRAILING = ".,:;!?)]}([{"


def _user_pass_at(text: str, pos: int) -> Finding | None:
    """The password of ``credentials admin / X`` or ``creds are admin:X`` after a credential
    word ending at ``pos`` (issue 16): the user stays; the password must be machine-like or
    hold a symbol (``admin / admin`` and ``user/password`` placeholders stay)."""
    m = _USER_PASS_RE.match(text, pos)
    if not m:
        return None
    # trailing brackets and slashes are the text's, not the password's ("admin / X(/")
    pw, user = m.group("pw"), m.group("user")
    bracket = min((pw.find(c) for c in "([{" if c in pw), default=-1)
    if 0 < bracket < pw.find("/"):  # "admin / X(/0": the text's bracket, then a path
        pw = pw[:bracket]
    pw = pw.rstrip(".,;:)]}([{/")
    if _FILE_RE.match(pw) and _machine_like(stem := pw[: pw.rfind(".")].rstrip(".,;:)]}([{/")):
        # "admin / 000000Q7.And then": a sentence run on after the password, not a file
        # name (a file's stem is words: "notes.txt"); the password stops at the dot
        pw = stem
    spaced = " " in text[m.end("user") : m.start("pw")]
    if not (
        _machine_like(pw)
        or (spaced and len(pw) >= 6 and not pw.isalnum() and not _is_placeholder(pw))
    ):
        return None
    if (
        pw.lower() in _PLACEHOLDER_WORDS
        or "/" in pw
        or pw == user
        or _FILE_RE.match(pw)
        or (not _HAS_ALNUM.search(user))
    ):
        return None
    return Finding(m.start("pw"), m.start("pw") + len(pw), "password", 1)


# ---------------------------------------------------------------------------- entropy

#: the next word after a secret word (``its secret is X``, ``bot token X``): an optional
#: ``:``/``=``, an opening quote or bracket, then the word
_NEAR_WORD_RE = lazy_compile(r"[ \t]*(?:[:=][ \t]*)?[\"'`(]?([^\s\"'`<>()\[\]{},;]+)")
_TOKEN_CHARS_RE = lazy_compile(r"[A-Za-z0-9+/=_.~-]+\Z")
_LOWER_HEX_RE = lazy_compile(r"[0-9a-f]+\Z")
_UUID_RE = lazy_compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
    r"[0-9a-fA-F]{12}\Z"
)
_FILE_RE = lazy_compile(r".*\.[A-Za-z][A-Za-z0-9]{0,4}\Z")
#: words run together, each capitalised (``requiredTypesForDisplay``): an identifier
CAMEL_WORDS_RE = lazy_compile(r"(?:[A-Z]?[a-z]{2,})+\Z")
_WORD_PART_RE = lazy_compile(r"(?:[a-z]+|[A-Z][a-z]+|[A-Z]+|\d+)\Z")
#: how many words after a secret word the entropy rule looks at, within how many characters
NEAR_WORDS = 6
NEAR_CHARS = 120
#: the least length and Shannon entropy (bits per character) of a token the entropy rule takes
ENTROPY_MIN_LEN = 20
ENTROPY_MIN_BITS = 3.5


def _words_joined(value: str) -> bool:
    """Words or numbers joined by ``/ _ . -`` (``MY_TOKEN_2024``, ``created-at``): a name."""
    parts = [p for p in re.split(r"[/_.-]", value) if p]
    return len(parts) >= 2 and all(_WORD_PART_RE.match(p) for p in parts)


def _shannon_bits(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def high_entropy_token(value: str) -> bool:
    """A long mixed token that looks random (issue 16's entropy rule): at least
    ``ENTROPY_MIN_LEN`` characters of ``[A-Za-z0-9+/=_.~-]``, ``ENTROPY_MIN_BITS`` bits per
    character, a letter and a digit or both cases well mixed; never lowercase hex (git SHAs,
    digests), a UUID, a path, a file name, words joined by ``_ - .``, or base64 of plain text."""
    if len(value) < ENTROPY_MIN_LEN or not _TOKEN_CHARS_RE.match(value):
        return False
    if (
        value[0] in "/~.$-"
        or "=" in value.rstrip("=")
        or _is_placeholder(value)
        or _LOWER_HEX_RE.match(value)
        or (_UUID_RE.match(value) or _FILE_RE.match(value))
    ):
        return False
    if _words_joined(value) or CAMEL_WORDS_RE.match(value):
        return False
    if _shannon_bits(value) < ENTROPY_MIN_BITS:
        return False
    letters = [c for c in value if c.isalpha()]
    upper = sum(1 for c in letters if c.isupper())
    mixed_case = bool(letters) and min(upper, len(letters) - upper) * 6 >= len(letters)
    if not letters or not (_HAS_DIGIT.search(value) or mixed_case):
        return False
    return not _plain_base64(value)


def _plain_base64(value: str) -> bool:
    """``value`` is base64 of printable text with a space (``dGhpcyBpcyBh…``, prose encoded)."""
    if len(value) % 4 or len(value) < 8 or not _B64_ANY_RE.match(value):
        return False
    import base64  # only now: the read commands' start loads no base64 (issue 43 goal 3)
    import binascii

    try:
        raw = base64.b64decode(value, validate=True)
    except (ValueError, binascii.Error):
        return False
    return b" " in raw and all(32 <= b < 127 or b in (9, 10, 13) for b in raw)


def _entropy_near(text: str, pos: int, kind: str) -> Finding | None:
    """A high-entropy token (``high_entropy_token``) among the ``NEAR_WORDS`` words after a
    secret word ending at ``pos`` (``its secret is wJalrXUtnFEMI/K7MDENG…``, ``bot token
    MTA4…``), in the same sentence and line: the token goes as ``kind``."""
    end = min(len(text), pos + NEAR_CHARS)
    for _ in range(NEAR_WORDS):
        m = _NEAR_WORD_RE.match(text, pos)
        if not m or m.start(1) >= end:
            return None
        word = m.group(1)
        value = word.rstrip(".,:;!?")
        if high_entropy_token(value):
            return Finding(m.start(1), m.start(1) + len(value), kind, 1)
        if value != word and word[-1] in ".!?":  # the sentence ended
            return None
        pos = m.end()
    return None


# ---------------------------------------------------------------------------- command lines

_USER_FLAG_RE = lazy_compile(r"(?:-u|--user)(?:[ \t]+|=|(?=[^\s-]))")
_HTTP_CLIENT_RE = lazy_compile(r"\b(?:curl|wget|http|https|httpie|xh)\b")
#: the program of the command a ``-p`` belongs to: ``sshpass`` right before it (only other
#: options between), or a MySQL/MariaDB client anywhere before it in the command
_SSHPASS_RE = lazy_compile(r"(?<![\w.-])sshpass(?:[ \t]+-[a-oq-zA-Z]\S*)*[ \t]+\Z")
#: ``docker login … -p TOKEN`` (also podman, helm registry, buildah): the spaced value
_REGISTRY_LOGIN_RE = lazy_compile(
    r"(?<![\w.-])(?:docker|podman|buildah|nerdctl|helm[ \t]+registry)[ \t]+login\b"
)
_MYSQL_RE = lazy_compile(r"(?<![\w.-])(?:mysql|mariadb)[a-z-]*[ \t]")
_COMMAND_END_RE = lazy_compile(r".*[;|&\n]", re.S)


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
    if not span or ":" not in text[span[0] : span[1]]:
        return None
    user, pw = text[span[0] : span[1]].split(":", 1)
    if not pw or pw == user or pw.isdigit() or not _literal_password(pw):
        return None
    line = text[max(text.rfind("\n", 0, hit) + 1, hit - 300) : hit]
    if not (_credential_like(pw, min_len=6) or _HTTP_CLIENT_RE.search(line)):
        return None
    return Finding(span[1] - len(pw), span[1], "password", 2)


def _command_password_at(text: str, hit: int) -> Finding | None:
    """The password after the ``-p`` at ``hit`` of ``sshpass -p pw`` or ``docker login -u
    me -p TOKEN`` (podman, buildah, nerdctl, helm registry), or glued to a MySQL or MariaDB
    client's ``-p`` (``mysql -pS3cret``; a spaced ``-p`` prompts for it)."""
    if hit == 0 or text[hit - 1] not in " \t" or hit + 2 >= len(text):
        return None
    command = text[max(hit - 500, 0) : hit]
    end = _COMMAND_END_RE.match(command)
    command = command[end.end() :] if end else command
    pos = hit + 2
    if _SSHPASS_RE.search(command) or _REGISTRY_LOGIN_RE.search(command):
        while pos < len(text) and text[pos] in " \t":
            pos += 1
    elif text[pos] in " \t-" or not _MYSQL_RE.search(command):
        return None
    span = _arg_span(text, pos) if pos < len(text) and not text[pos].isspace() else None
    if not span or not _literal_password(text[span[0] : span[1]]):
        return None
    return Finding(span[0], span[1], "password", 2)


# ---------------------------------------------------------------------------- positional

#: key names a secret follows without ``=`` or ``:`` (``aws configure set
#: aws_secret_access_key VALUE``, ``npm config set //host/:_authToken VALUE``, a ``.netrc``
#: ``machine H login U password P``, "AWS secret key VALUE"), lower-cased
POSITIONAL_KEYS = ("secret_access_key", "_authtoken", "secret key")
_POSITIONAL_VALUE_RE = lazy_compile(r"[ \t]*[:=]?[ \t]*([\"']?)([A-Za-z0-9/+=_.~-]{8,})\1")
#: curl's ``-b`` / ``--cookie`` with ``name=value`` pairs (a file name has no ``=``)
_COOKIE_FLAG_RE = lazy_compile(r"(?:-b|--cookie)(?:[ \t]+|=)([\"']?)([^\s\"']*=[^\s\"']+)\1")
_NETRC_RE = lazy_compile(
    r"(?<![\w.-])(?:machine\s+[\w-]+(?:\.[\w-]+)+"
    r"(?:\s+(?:login|account)\s+\S+)*"
    r"|default(?:\s+(?:login|account)\s+\S+)+)\s+password\s+(\S+)"
)
_COOKIE_RE = lazy_compile(r"(?i)(?<![\w-])(?:set-)?cookie:[ \t]*([^\r\n\"']+)")


def positional_at(text: str, hit: int, anchor: str) -> Finding | None:
    """The machine-made value right after a key in ``POSITIONAL_KEYS`` at ``hit`` (the
    anchor as found), with a space, ``:`` or ``=`` between: 8 characters at least after an
    identifier key (``aws_secret_access_key``, ``_authToken``), 16 after prose ("secret
    key")."""
    m = _POSITIONAL_VALUE_RE.match(text, hit + len(anchor))
    min_len = 16 if " " in anchor else 8
    if not m or len(m.group(2)) < min_len or not _credential_like(m.group(2), min_len=min_len):
        return None
    kind = "token" if "token" in anchor.lower() else "secret"
    return Finding(m.start(2), m.end(2), kind, 1)  # a key = value finding names it better


def netrc_at(text: str, hit: int) -> Finding | None:
    """The password of a ``.netrc`` entry ``machine H [login U] password P`` (or ``default
    login U password P``; tokens on one line or several) at ``hit`` (``H`` a dotted host
    name, so "machine learning password policy" is prose)."""
    m = _NETRC_RE.match(text, hit)
    if not m or not _literal_password(m.group(1)):
        return None
    return Finding(m.start(1), m.end(1), "password", 2)


def cookie_flag_at(text: str, hit: int) -> Finding | None:
    """curl's ``-b 'name=value'`` / ``--cookie name=value`` at ``hit``, in an HTTP client's
    command line, when a value looks machine-made."""
    if hit > 0 and not text[hit - 1].isspace():
        return None
    line = text[max(text.rfind("\n", 0, hit) + 1, hit - 300) : hit]
    m = _COOKIE_FLAG_RE.match(text, hit)
    if not m or not _HTTP_CLIENT_RE.search(line):
        return None
    values = [pair.split("=", 1)[1] for pair in m.group(2).split(";") if "=" in pair]
    if not any(_credential_like(v.strip(), min_len=12) for v in values):
        return None
    return Finding(m.start(2), m.end(2), "cookie", 2)


def cookie_at(text: str, hit: int) -> Finding | None:
    """The value of a ``Cookie:`` / ``Set-Cookie:`` header at ``hit``: its ``name=value``
    pairs, when one holds a machine-made value (prose such as "Cookie: a treat" stays)."""
    start = hit - 4 if text[max(hit - 4, 0) : hit].lower() == "set-" else hit
    m = _COOKIE_RE.match(text, start)
    if not m or "=" not in m.group(1):
        return None
    values = [pair.split("=", 1)[1].strip() for pair in m.group(1).split(";") if "=" in pair]
    if not any(_credential_like(v, min_len=12) for v in values):
        return None
    return Finding(m.start(1), m.end(1), "cookie", 2)
