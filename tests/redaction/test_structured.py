"""Structured values through the funnel (issue 15): tool-call arguments that are objects,
where a key naming a secret redacts its value, and hypothesis properties (no planted secret
survives, no benign tree changes, idempotent)."""

from __future__ import annotations

import string

import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from continuity.redaction import redact_value
from continuity.redaction.funnel import redact
from tests.redaction.test_redact import (
    BENIGN,
    SECRET_STRATEGIES,
    _assert_gone,
    _hex,
    _path,
    _sha256,
    _uuid,
    _words,
)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"token": "deadbeef12345678"}, {"token": "[REDACTED:token]"}),
        ({"password": "hunter2"}, {"password": "[REDACTED:password]"}),
        ({"secret": "abc"}, {"secret": "[REDACTED:secret]"}),
        (
            {"url": "https://api.example.com", "apiKey": "k-2024-prod"},
            {"url": "https://api.example.com", "apiKey": "[REDACTED:api-key]"},
        ),
        (
            {"env": {"PGPASSWORD": "s3cr3t", "PGUSER": "app"}},
            {"env": {"PGPASSWORD": "[REDACTED:password]", "PGUSER": "app"}},
        ),
        (
            {"credentials": {"user": "ci", "value": "x9Yk2pQ"}, "expires_in": 3600},
            {"credentials": {"user": "ci", "value": "[REDACTED:credential]"}, "expires_in": 3600},
        ),
        (
            {"password": 12345678, "secret": True, "token": None},
            {"password": "[REDACTED:password]", "secret": True, "token": None},
        ),
        (
            {
                "tokens": ["a", "b"],
                "max_tokens": 4096,
                "token_count": 12,
                "password_file": "/etc/pw",
            },
            {
                "tokens": ["a", "b"],
                "max_tokens": 4096,
                "token_count": 12,
                "password_file": "/etc/pw",
            },
        ),
        (
            {"token": "$GITHUB_TOKEN", "password": "<password>", "secret": "***"},
            {"token": "$GITHUB_TOKEN", "password": "<password>", "secret": "***"},
        ),
        (
            {"auth": {"type": "oauth", "token": "ya-real-1234"}},
            {"auth": {"type": "oauth", "token": "[REDACTED:token]"}},
        ),
        ({"auth": "basic"}, {"auth": "basic"}),
        ({"pwd": "/home/dev/src"}, {"pwd": "/home/dev/src"}),
        (
            {"command": "curl -H 'Authorization: Bearer abcDEF123456ghiJKL' https://x"},
            {"command": "curl -H 'Authorization: Bearer [REDACTED:bearer-token]' https://x"},
        ),
        ("export API_TOKEN=deadbeef12345678", "export API_TOKEN=[REDACTED:token]"),
        ([{"secret": "x1y2z3w4"}], [{"secret": "[REDACTED:secret]"}]),
    ],
)
def test_redact_value_keys_naming_secrets(arguments, expected):
    """Issue 15: the Codex call ``{"token": "deadbeef12345678"}`` and Claude Code calls with
    ``{"password": …}`` / ``{"secret": …}`` lose the value; keys, structure, metadata keys and
    placeholders stay."""
    before = orjson.dumps(arguments)
    assert redact_value(arguments) == expected
    assert orjson.dumps(arguments) == before  # the input is not changed


def test_redact_value_text_funnel_missed_these_leaves():
    """The value alone carries no key: the text funnel leaves it (the bug), the walk does
    not."""
    assert redact("deadbeef12345678") == "deadbeef12345678"
    assert redact_value({"token": "deadbeef12345678"}) == {"token": "[REDACTED:token]"}


_SECRET_KEYS = st.sampled_from(
    [
        "token",
        "password",
        "secret",
        "apiKey",
        "api_key",
        "client_secret",
        "PGPASSWORD",
        "x-auth-token",
        "accessToken",
        "passphrase",
        "DB_PASSWORD",
        "privateKey",
        "credentials",
    ]
)
_BENIGN_KEYS = st.sampled_from(
    [
        "command",
        "path",
        "file_path",
        "content",
        "max_tokens",
        "token_count",
        "password_file",
        "secret_name",
        "description",
        "old_string",
        "new_string",
        "pattern",
        "url",
        "tokens",
        "id",
    ]
)
_machine = st.text(alphabet=string.ascii_letters + string.digits, min_size=8, max_size=40).filter(
    lambda v: any(c.isdigit() for c in v) and any(c.isalpha() for c in v)
)
_planted = st.one_of(
    _machine.map(lambda b: (b, b)),
    st.sampled_from(sorted(SECRET_STRATEGIES)).flatmap(lambda k: SECRET_STRATEGIES[k]),
)
_benign_leaf = st.one_of(
    _words,
    _hex,
    _sha256,
    _uuid,
    _path,
    st.integers(-(2**40), 2**40),
    st.booleans(),
    st.none(),
    st.sampled_from([c["input"] for c in BENIGN]),
)


def _tree(leaf: st.SearchStrategy, keys: st.SearchStrategy) -> st.SearchStrategy:
    return st.recursive(
        leaf,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)
        ),
        max_leaves=12,
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(planted=_planted, key=_SECRET_KEYS, tree=_tree(_benign_leaf, _BENIGN_KEYS), data=st.data())
def test_redact_value_property_planted_secret_never_survives(planted, key, tree, data):
    """A secret under a secret-naming key, or any corpus secret as a string leaf, placed
    anywhere in a random arguments tree, loses every 8-character piece of its body."""
    secret, body = planted
    path = data.draw(st.lists(_BENIGN_KEYS, max_size=3))
    node: dict = {key: secret}
    for name in reversed(path):
        node = {name: node}
    arguments = {"rest": tree, "inner": node}
    around = orjson.dumps(tree).decode()
    _assert_gone(body, orjson.dumps(redact_value(arguments)).decode(), around)


@settings(max_examples=150, deadline=None)
@given(tree=_tree(_benign_leaf, _BENIGN_KEYS))
def test_redact_value_property_benign_tree_unchanged(tree):
    """A tree of benign keys (metadata keys about tokens included) and look-alike values
    (digests, UUIDs, paths, the benign corpus) comes back equal."""
    assert redact_value(tree) == tree


@settings(max_examples=80, deadline=None)
@given(planted=_planted, key=_SECRET_KEYS, tree=_tree(_benign_leaf, _BENIGN_KEYS))
def test_redact_value_property_idempotent(planted, key, tree):
    """redact_value(redact_value(v)) == redact_value(v)."""
    once = redact_value({"a": tree, key: planted[0]})
    assert redact_value(once) == once


def test_redact_value_repeat_in_another_field_goes_too():
    """A value found to be a secret in one field (by its key, or by the text funnel) goes
    wherever another string of the same tree repeats it; a short one (under 8 characters)
    only where it was found."""
    aws = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    arguments = {
        "env": {"API_TOKEN": "deadbeef12345678cafe", "PGPASSWORD": "hunter2"},
        "command": "echo deadbeef12345678cafe && psql -U hunter2",
        "script": f"export AWS_SECRET_ACCESS_KEY={aws}",
        "notes": [f"bare: {aws}", 42, None],
    }
    assert redact_value(arguments) == {
        "env": {"API_TOKEN": "[REDACTED:token]", "PGPASSWORD": "[REDACTED:password]"},
        "command": "echo [REDACTED:token] && psql -U hunter2",
        "script": "export AWS_SECRET_ACCESS_KEY=[REDACTED:base64-credential]",
        "notes": ["bare: [REDACTED:base64-credential]", 42, None],
    }


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    value=_machine,
    key=_SECRET_KEYS,
    tree=_tree(_benign_leaf, _BENIGN_KEYS),
    other=_BENIGN_KEYS,
    before=st.sampled_from(["", "echo ", "value: ", "(", "x"]),
)
def test_redact_value_property_repeated_secret_never_survives(value, key, tree, other, before):
    """A value redacted under a secret key appears in no other string of the tree either,
    and redacting again changes nothing."""
    arguments = {"inner": {key: value}, "rest": tree, other: [before + value + " done"]}
    once = redact_value(arguments)
    assert value not in orjson.dumps(once).decode()
    assert redact_value(once) == once


# ------------------------------------------------------------------ name/value pairs


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            {"env": [{"name": "DB_PASSWORD", "value": "ListPairPw-18"}]},
            {"env": [{"name": "DB_PASSWORD", "value": "[REDACTED:password]"}]},
        ),
        (
            {
                "spec": {
                    "containers": [
                        {
                            "image": "app:1.4",
                            "env": [
                                {"name": "LOG_LEVEL", "value": "debug"},
                                {"name": "STRIPE_API_KEY", "value": "k8sEnvVal-77"},
                                {
                                    "name": "API_TOKEN",
                                    "valueFrom": {"secretKeyRef": {"name": "app", "key": "token"}},
                                },
                            ],
                        }
                    ]
                }
            },
            {
                "spec": {
                    "containers": [
                        {
                            "image": "app:1.4",
                            "env": [
                                {"name": "LOG_LEVEL", "value": "debug"},
                                {"name": "STRIPE_API_KEY", "value": "[REDACTED:api-key]"},
                                {
                                    "name": "API_TOKEN",
                                    "valueFrom": {"secretKeyRef": {"name": "app", "key": "token"}},
                                },
                            ],
                        }
                    ]
                }
            },
        ),
        (
            [{"Name": "NPM_TOKEN", "Value": "ghActVar-2024q"}, {"Name": "NODE_ENV", "Value": "ci"}],
            [
                {"Name": "NPM_TOKEN", "Value": "[REDACTED:token]"},
                {"Name": "NODE_ENV", "Value": "ci"},
            ],
        ),
        (
            {"environment": [{"key": "client_secret", "value": "composeSec-9x"}]},
            {"environment": [{"key": "client_secret", "value": "[REDACTED:secret]"}]},
        ),
        (
            {
                "Parameters": [
                    {"ParameterKey": "DbPassword", "ParameterValue": "CfnPw-2024x"},
                    {"ParameterKey": "Stage", "ParameterValue": "prod"},
                ]
            },
            {
                "Parameters": [
                    {"ParameterKey": "DbPassword", "ParameterValue": "[REDACTED:password]"},
                    {"ParameterKey": "Stage", "ParameterValue": "prod"},
                ]
            },
        ),
        (
            {"name": "PGPASSWORD", "value": 12345678},
            {"name": "PGPASSWORD", "value": "[REDACTED:password]"},
        ),
        # issue 45 item 5: the name field is any ``…Name``/``…Key`` key, the value any ``…Value``
        (
            {"secretName": "ACME_WEBHOOK_SIGNING_SECRET", "value": "whk_9f8e7d6c5b4aXyZ12"},
            {"secretName": "ACME_WEBHOOK_SIGNING_SECRET", "value": "[REDACTED:secret]"},
        ),
        (
            {
                "secrets": [
                    {"secretName": "ACME_WEBHOOK_SIGNING_SECRET", "secretValue": "whk_9f8e7Zq"}
                ]
            },
            {
                "secrets": [
                    {
                        "secretName": "ACME_WEBHOOK_SIGNING_SECRET",
                        "secretValue": "[REDACTED:secret]",
                    }
                ]
            },
        ),
        (
            {"envName": "SLACK_BOT_TOKEN", "envValue": "plainlower"},
            {"envName": "SLACK_BOT_TOKEN", "envValue": "[REDACTED:token]"},
        ),
        (
            {"variable_name": "DB_PASSWORD", "variable_value": "hunter2"},
            {"variable_name": "DB_PASSWORD", "variable_value": "[REDACTED:password]"},
        ),
        (
            {"parameter_key": "ApiKey", "default_value": "k-123456789"},
            {"parameter_key": "ApiKey", "default_value": "[REDACTED:api-key]"},
        ),
    ],
)
def test_redact_value_name_value_pair_naming_a_secret(arguments, expected):
    """The review: a ``value`` whose sibling ``name``/``key`` field names a secret (Kubernetes
    env lists, GitHub Actions variables, compose-like lists, CloudFormation parameters) loses
    its value; the name, other pairs and ``valueFrom`` references stay."""
    assert redact_value(arguments) == expected


@pytest.mark.parametrize(
    "arguments",
    [
        {"env": [{"name": "PWD", "value": "/app"}, {"name": "LOG_LEVEL", "value": "debug"}]},
        {"name": "password", "type": "password", "value": ""},
        {"name": "SORT_KEY", "value": "created_at_desc"},
        {"name": "TOKEN_LIMIT", "value": "4096"},
        {"name": "DB_PASSWORD", "value": "$DB_PASSWORD"},
        {"name": "password_file", "value": "/run/secrets/db"},
        {"key": "secret", "label": "Secret"},
        {"name": "the secret and its value are described below in more detail", "value": "x1"},
        {"secretName": "db-credentials", "value": "x"},
        {"envName": "LOG_LEVEL", "envValue": "debug"},
        {"secretName": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "pw"}}},
    ],
)
def test_redact_value_name_value_pair_lookalikes_kept(arguments):
    """A pair naming no secret, a directory under PWD, a metadata name, a placeholder value or
    a pair with no value field stays equal."""
    assert redact_value(arguments) == arguments


_SECRET_NAMES = st.sampled_from(
    [
        "DB_PASSWORD",
        "PGPASSWORD",
        "API_TOKEN",
        "client_secret",
        "STRIPE_API_KEY",
        "DbPassword",
        "npm_token",
        "AWS_SECRET_ACCESS_KEY",
    ]
)
_PLAIN_NAMES = st.sampled_from(
    [
        "LOG_LEVEL",
        "NODE_ENV",
        "PORT",
        "TOKEN_LIMIT",
        "SECRET_NAME",
        "password_file",
        "HOME",
        "max_tokens",
    ]
)
_PAIR_FIELDS = st.sampled_from(
    [
        ("name", "value"),
        ("Name", "Value"),
        ("key", "value"),
        ("ParameterKey", "ParameterValue"),
        ("secretName", "value"),
        ("envName", "envValue"),
    ]
)


@settings(max_examples=100, deadline=None)
@given(
    name=_SECRET_NAMES,
    fields=_PAIR_FIELDS,
    value=_machine,
    others=st.lists(st.tuples(_PLAIN_NAMES, _words), max_size=4),
    at=st.integers(0, 4),
)
def test_redact_value_property_pair_value_never_survives(name, fields, value, others, at):
    """A made value in a name/value pair naming a secret, among ordinary pairs, is gone; the
    ordinary pairs come back equal."""
    nk, vk = fields
    plain = [{nk: n, vk: v} for n, v in others]
    pairs = [*plain[:at], {nk: name, vk: value}, *plain[at:]]
    out = redact_value({"env": pairs})
    _assert_gone(value, orjson.dumps(out).decode(), orjson.dumps(plain).decode())
    assert [p for p in out["env"] if p[nk] != name] == plain
