"""Redaction of structured values: JSON-like objects (tool-call arguments) whose keys say what
their values are (issue 15).

``redact(text)`` finds ``"token": "…"`` inside a *text*; a tool call's arguments travel as an
object, where a value such as ``deadbeef12345678`` under the key ``token`` carries no key in
front of it. ``redact_value`` walks the object instead: a value under a key that names a secret
(the same key rule as the text funnel, ``keyed._key_kind``: ``password``, ``secret``,
``token``, ``api_key``, ``PGPASSWORD``…; metadata keys such as ``max_tokens`` or
``password_file`` are not secret) becomes ``[REDACTED:<kind>]``; every other string passes
through ``redact``. Keys and structure are kept.

Rules for a value under a secret key (mirroring the quoted-value rule of ``keyed._kv_value``):

- a string goes unless it is a placeholder (``$TOKEN``, ``<token>``, ``***``, ``null``…,
  ``keyed._is_placeholder``) or shorter than 3 characters; under a *weak* key (``auth``,
  ``SORT_KEY``) only a machine-made value goes (``keyed._weak_value_plain``); ``pwd`` /
  ``oldpwd`` holding a directory stay;
- a number goes under a ``password`` key (``{"pin": …}`` is not a secret key; ``{"password":
  123456}`` is); booleans and null stay;
- an object or list under a secret key is secret throughout: each string leaf goes by the same
  rule, except under an inner key that is metadata (``type``, ``name``, ``expires_at``…),
  whose values pass through ``redact`` only;
- a **name/value pair** names its secret in a sibling field: ``{"name": "DB_PASSWORD",
  "value": "…"}`` (Kubernetes and ECS env lists, GitHub Actions variables), ``{"key":
  "api_token", "value": "…"}`` (Terraform, compose-like lists), ``{"ParameterKey":
  "DbPassword", "ParameterValue": "…"}`` (CloudFormation), ``{"secretName":
  "ACME_WEBHOOK_SIGNING_SECRET", "value": "…"}`` (issue 45 item 5): when the name field
  (``PAIR_NAME_KEYS``, or any key whose last word is ``name``, ``key``, ``variable`` or
  ``var`` and that names no secret itself: ``secretName``, ``envName``, ``parameter_key``)
  holds a string that is a secret key by the rule above, the value field (``PAIR_VALUE_KEYS``,
  or any key whose last word is ``value`` or ``val``: ``secretValue``, ``envValue``) is
  treated as if it stood under that key (``{"name": "PWD", "value":
  "/app"}`` and ``{"name": "LOG_LEVEL", …}`` stay; a ``valueFrom`` reference is not a value).

A value of ``funnel.REPEAT_MIN_CHARS`` (8) or more characters found to be a secret anywhere in
the tree (by the key rule, or by the funnel in a string) is redacted wherever another string of
the tree repeats it (``{"env": {"API_TOKEN": V}, "command": "echo V"}``): the funnel's repeat
rule across the tree's strings, a second walk only when something was found.

Lives apart from ``funnel`` (token shapes) and ``keyed`` (text detectors) so each can change
on its own; it imports both and neither imports it.
"""

from __future__ import annotations

from continuity.redaction.funnel import REPEAT_MIN_CHARS, marker, redact
from continuity.redaction.keyed import (
    _DIR_RE,
    _MODIFIERS,
    _WORD_RE,
    _is_placeholder,
    _key_kind,
    _value_kind,
    _weak_value_plain,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no ``typing`` at start-up (issue 43 goal 3)
    from typing import Any

__all__ = ["redact_value"]

#: Containers nested deeper than this have every string leaf passed through ``redact`` without
#: the key rule, iteratively (a guard against pathological input; real arguments never reach it).
MAX_DEPTH = 64
#: The shell's working-directory variables: a directory under them is not a password.
_DIR_KEYS = ("pwd", "oldpwd")
#: Fields of a name/value pair that name the variable, and that hold its value (lower case).
PAIR_NAME_KEYS = frozenset({"name", "key", "parameterkey", "parametername", "variable", "var"})
PAIR_VALUE_KEYS = frozenset({"value", "parametervalue", "val"})
#: The last word of a key that makes it a pair's name field or value field (``secretName``,
#: ``env_var``; ``secretValue``, ``defaultValue``), beside the exact keys above (issue 45 item 5).
PAIR_NAME_WORDS = frozenset({"name", "key", "variable", "var"})
PAIR_VALUE_WORDS = frozenset({"value", "val"})
#: A name longer than this is text, not a variable name.
_PAIR_NAME_CHARS = 200


def redact_value(value: Any) -> Any:
    """``value`` (a JSON-like tree: dict, list, str, int, float, bool, None) with every secret
    redacted: strings through ``redact``, values under secret-naming keys replaced by
    ``[REDACTED:<kind>]`` (module docstring). A value of 8 or more characters found to be a
    secret in one place (``{"env": {"API_TOKEN": V}}``) goes wherever another string of the
    tree repeats it (``"command": "curl -H 'X-Token: V'"``): a second pass, only when
    something was found. A new tree is returned; ``value`` is not changed. Idempotent:
    ``redact_value(redact_value(v)) == redact_value(v)``."""
    found: dict[str, str] = {}
    out = _walk(value, None, 0, found)
    if not found or isinstance(out, str):
        return out
    return _walk(out, None, 0, None, found)


def _walk(
    value: Any,
    secret: tuple[str, bool] | None,
    depth: int,
    found: dict[str, str] | None,
    known: dict[str, str] | None = None,
) -> Any:
    """``value`` redacted; ``secret`` is the ``(kind, weak)`` of the nearest enclosing secret
    key (None outside any); each secret value found is added to ``found`` (value -> kind);
    ``known`` values are redacted wherever they occur (``funnel.redact``)."""
    if isinstance(value, str):
        return (
            _secret_string(value, secret, found, known)
            if secret
            else redact(value, known=known, collect=found)
        )
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        if secret is not None and secret[0] in ("password", "pwd") and not secret[1]:
            return marker("password")
        return value
    if depth >= MAX_DEPTH:
        return value if not isinstance(value, (dict, list)) else _flat(value, known)
    if isinstance(value, dict):
        pair = _pair_kind(value)
        out: dict[Any, Any] = {}
        for key, item in value.items():
            inner = _inner(key, secret)
            if pair is not None and _pair_value_key(key):
                inner = pair
            out[key] = _walk(item, inner, depth + 1, found, known)
        return out
    if isinstance(value, (list, tuple)):
        return [_walk(item, secret, depth + 1, found, known) for item in value]
    return value


def _inner(key: Any, outer: tuple[str, bool] | None) -> tuple[str, bool] | None:
    """The secret context of the value under ``key``: its own kind when the key names a
    secret; none when the key is metadata; else the enclosing one."""
    if not isinstance(key, str):
        return outer
    named = _key_kind(key)
    if named is not None:
        return ("pwd", False) if key.lower() in _DIR_KEYS else named
    if outer is not None and _is_metadata(key):
        return None
    return outer


def _pair_kind(obj: dict[Any, Any]) -> tuple[str, bool] | None:
    """The secret context of the value field of a name/value pair ``obj`` (``{"name":
    "DB_PASSWORD", "value": …}``): the kind of the secret key its name field names, None when
    ``obj`` is no such pair or names nothing secret."""
    if not any(_pair_value_key(k) for k in obj):
        return None
    for key, item in obj.items():
        if _pair_name_key(key) and isinstance(item, str) and 0 < len(item) <= _PAIR_NAME_CHARS:
            named = _key_kind(item.strip())
            if named is not None:
                return ("pwd", False) if item.strip().lower() in _DIR_KEYS else named
    return None


def _last_word(key: str) -> str:
    words = _WORD_RE.findall(key.rsplit(".", 1)[-1])
    return words[-1].lower() if words else ""


def _pair_name_key(key: Any) -> bool:
    """``key`` is the name field of a name/value pair: ``PAIR_NAME_KEYS``, or a key ending in
    a word of ``PAIR_NAME_WORDS`` that names no secret itself (``secretName``, ``envName``)."""
    if not isinstance(key, str):
        return False
    low = key.lower()
    return low in PAIR_NAME_KEYS or (_last_word(key) in PAIR_NAME_WORDS and _key_kind(key) is None)


def _pair_value_key(key: Any) -> bool:
    """``key`` is the value field of a name/value pair: ``PAIR_VALUE_KEYS``, or a key ending in
    ``value``/``val`` (``secretValue``, ``envValue``); never a reference (``valueFrom``)."""
    if not isinstance(key, str):
        return False
    return key.lower() in PAIR_VALUE_KEYS or _last_word(key) in PAIR_VALUE_WORDS


def _is_metadata(key: str) -> bool:
    words = [w.lower() for w in _WORD_RE.findall(key.rsplit(".", 1)[-1])]
    return any(w in _MODIFIERS for w in words)


def _secret_string(
    value: str, secret: tuple[str, bool], found: dict[str, str] | None, known: dict[str, str] | None
) -> str:
    kind, weak = secret
    v = value.strip()
    if (
        len(v) < 3
        or _is_placeholder(v)
        or (weak and _weak_value_plain(v))
        or (kind == "pwd" and _DIR_RE.match(v))
    ):
        return redact(value, known=known, collect=found)
    kind = _value_kind(v, "password" if kind == "pwd" else kind)
    if found is not None and len(v) >= REPEAT_MIN_CHARS:
        found.setdefault(v, kind)
    return marker(kind)


def _flat(value: Any, known: dict[str, str] | None = None) -> Any:
    """Past ``MAX_DEPTH``: every string leaf through ``redact`` (no key rule, ``known`` values
    too), iteratively."""
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        holder, key = stack.pop()
        item = holder[key]
        if isinstance(item, str):
            holder[key] = redact(item, known=known)
        elif isinstance(item, dict):
            copy = dict(item)
            holder[key] = copy
            stack.extend((copy, k) for k in copy)
        elif isinstance(item, (list, tuple)):
            copy_list = list(item)
            holder[key] = copy_list
            stack.extend((copy_list, i) for i in range(len(copy_list)))
    return root[0]
