"""Tests of the redaction funnel: the corpus in tests/redaction, bug vectors B29 B30 B31 B33,
the origin's table (signet-behaviour.md §2) and hypothesis properties."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import string
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from continuity.redaction.funnel import find_secrets, redact, redact_all

CORPUS = Path(__file__).resolve().parent
SECRETS = json.loads((CORPUS / "secrets.json").read_text(encoding="utf-8"))
BENIGN = json.loads((CORPUS / "benign.json").read_text(encoding="utf-8"))


def test_corpus_sizes():
    """The corpus holds at least 60 secrets and 60 look-alike benign strings."""
    assert len(SECRETS) >= 60 and len(BENIGN) >= 60
    assert len({c["name"] for c in SECRETS + BENIGN}) == len(SECRETS) + len(BENIGN)


@pytest.mark.parametrize("case", SECRETS, ids=[c["name"] for c in SECRETS])
def test_redact_corpus_secret(case):
    """Each secret of the corpus gives exactly its expected output, and its body is gone."""
    out = redact(case["input"])
    assert out == case["expected"]
    assert case["secret"] not in out


@pytest.mark.parametrize("case", BENIGN, ids=[c["name"] for c in BENIGN])
def test_redact_corpus_benign_unchanged(case):
    """Each look-alike benign string survives byte-identical."""
    assert case["expected"] == case["input"]
    assert redact(case["input"]) == case["input"]


@pytest.mark.parametrize("case", SECRETS + BENIGN, ids=[c["name"] for c in SECRETS + BENIGN])
def test_redact_corpus_idempotent(case):
    """Redacting twice changes nothing more than redacting once."""
    once = redact(case["input"])
    assert redact(once) == once


def test_redact_b29_env_file_and_connection_string():
    """B29: a storage key and a DB password printed by a tool leave no trace."""
    key = "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg=="
    text = f"AZURE_STORAGE_KEY={key}\nDATABASE_URL=postgres://admin:hunter2@10.0.0.5/prod"
    assert redact(text) == (
        "AZURE_STORAGE_KEY=[REDACTED:base64-credential]\n"
        "DATABASE_URL=postgres://admin:[REDACTED:url-credential]@10.0.0.5/prod"
    )


def test_redact_b30_signature_fields_untouched():
    """B30: known-prefix secrets in text are replaced; the opaque signature stays identical."""
    sig = "EqQBCkgIBRABGAIqQKzL3s9Xbq7lZ0c8yF1rTUjW2mNcVd5oHpQa6iE4gS0tRkYxvB7nJf+/=="
    secret_text = (
        "keys: sk-ant-api03-Zx8fK2mQ9vLr4TnB7wYc1HdS6gPa3JeU0kNo5RtV-AA and AKIAIOSFODNN7EXAMPLE"
    )
    record = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "check env", "thinkingSignature": sig},
            {"type": "text", "text": secret_text},
        ],
    }
    for block in record["content"]:
        for field in ("text", "thinking"):
            if field in block:
                block[field] = redact(block[field])
    assert record["content"][0]["thinkingSignature"] == sig
    assert record["content"][1]["text"] == (
        "keys: [REDACTED:anthropic-key] and [REDACTED:aws-access-key]"
    )
    line = orjson.dumps({**record, "content": [{"thinkingSignature": sig, "text": secret_text}]})
    assert sig in redact(line.decode())


def test_redact_b31_private_span():
    """B31: a <private> span never reaches a derived text."""
    assert redact("ok, I'll use <private>TOKEN-123</private>") == "ok, I'll use [REDACTED:private]"


def test_redact_b33_whole_token_run():
    """B33: a token longer than its pattern, or with a suffix, is replaced whole."""
    body = "Zx8fK2mQ9vLr4TnB7wYc1HdS6gPa3JeU0kNo5RtViJ"  # 42 alphanumerics
    assert redact(f"token ghp_{body} end") == "token [REDACTED:github-token] end"
    assert redact("AKIAIOSFODNN7EXAMPLE_old") == "[REDACTED:aws-access-key]"


@pytest.mark.parametrize(
    "text,expected",
    [
        (
            "curl -H 'Authorization: Bearer abc.DEF-123_xyz~9' https://x.invalid",
            "curl -H 'Authorization: Bearer [REDACTED:bearer-token]' https://x.invalid",
        ),
        ("token abc123", "token abc123"),
        ("use key sk-live-4f9a2b7c1d for staging", "use key [REDACTED:openai-key] for staging"),
        ("secret_key=abcdefgh12", "secret_key=[REDACTED:secret]"),
        ('{"password": "hunter2secret"}', '{"password": "[REDACTED:password]"}'),
        ("x-api-key: 0123456789abcdef", "x-api-key: [REDACTED:api-key]"),
        (
            "blob dGhpcyBpcyBhIHNlY3JldCB0b2tlbiB2YWx1ZSE= end",
            "blob dGhpcyBpcyBhIHNlY3JldCB0b2tlbiB2YWx1ZSE= end",
        ),
        (
            "commit 3f2a9c1e0b7d4a6f8e5c2b1a0d9e8f7c6b5a4d3e merged",
            "commit 3f2a9c1e0b7d4a6f8e5c2b1a0d9e8f7c6b5a4d3e merged",
        ),
        ("$PATH=/usr/bin", "$PATH=/usr/bin"),
    ],
)
def test_redact_origin_table_done_better(text, expected):
    """The origin's misses are caught and its false positives are gone (§2 table)."""
    assert redact(text) == expected


def test_find_secrets_spans_and_kinds():
    """Findings are ordered, non-overlapping spans with the most specific kind."""
    text = "GITHUB_TOKEN=ghp_Zx8fK2mQ9vLr4TnB7wYc1HdS6gPa3JeU0kNo and pw=x"
    found = find_secrets(text)
    assert [(f.start, f.end, f.kind) for f in found] == [(13, 53, "github-token")]


def test_redact_without_secrets_returns_same_object():
    """Text without secrets comes back as the very same string."""
    text = "nothing to see in /home/dev/project"
    assert redact(text) is text


def test_redact_all_redacts_each_item():
    """redact_all maps redact over a list."""
    assert redact_all(["a", "password=hunter2x"]) == ["a", "password=[REDACTED:password]"]


def test_redact_repeat_of_a_found_value_goes_too():
    """The review's leak: a value found by the keyed detector, then the same value bare further
    down the same tool output; every occurrence goes, with the same kind of marker."""
    value = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    text = f"AWS_SECRET_ACCESS_KEY={value}\nok\nbare: {value}\n({value})"
    out = redact(text)
    assert out == (
        "AWS_SECRET_ACCESS_KEY=[REDACTED:base64-credential]\nok\n"
        "bare: [REDACTED:base64-credential]\n([REDACTED:base64-credential])"
    )
    assert value not in out and redact(out) == out


def test_redact_repeat_needs_eight_characters():
    """A value shorter than ``REPEAT_MIN_CHARS`` is redacted only where a detector found it:
    a short common word never becomes a secret everywhere."""
    from continuity.redaction.funnel import REPEAT_MIN_CHARS

    assert REPEAT_MIN_CHARS == 8
    assert (
        redact("PGPASSWORD=hunter2 psql -U hunter2")
        == "PGPASSWORD=[REDACTED:password] psql -U hunter2"
    )
    assert (
        redact("PGPASSWORD=hunter22 psql -U hunter22")
        == "PGPASSWORD=[REDACTED:password] psql -U [REDACTED:password]"
    )


def test_redact_repeat_of_many_values():
    """More values than ``str.find`` takes one by one (``_REPEAT_FIND_MAX``; then the trie of
    their prefixes): each is redacted wherever it occurs, values sharing their first 8
    characters and a value holding another too."""
    from continuity.redaction.funnel import _REPEAT_FIND_MAX

    values = [f"Zq8vN3xT{i:02d}kLm2PwR" for i in range(40)] + ["Zq8vN3xT00kLm2PwR_longer9"]
    text = "\n".join(f"DB_PASSWORD_{i}={v}" for i, v in enumerate(values))
    text += "\n" + " ".join(reversed(values)) + " end"
    assert len(values) > _REPEAT_FIND_MAX
    out = redact(text)
    assert not any(v in out for v in values)
    assert out.endswith(" ".join(["[REDACTED:password]"] * len(values)) + " end")
    assert out.count("[REDACTED:password]") == 2 * len(values)
    assert redact(out) == out


def test_redact_repeat_costs_nothing_without_findings(monkeypatch):
    """Text without secrets never reaches the repeat pass."""
    from continuity.redaction import funnel

    def boom(*_):  # pragma: no cover - must not run
        raise AssertionError("repeat pass ran")

    monkeypatch.setattr(funnel, "_repeats", boom)
    text = "nothing here: /home/dev, 3f2a9c1e0b7d4a6f8e5c2b1a0d9e8f7c6b5a4d3e " * 50
    assert funnel.redact(text) is text


# ---------------------------------------------------------------------------- properties

ALNUM = string.ascii_letters + string.digits
_body = st.text(alphabet=ALNUM, min_size=8, max_size=40)


def _mixed(min_size: int, max_size: int, alphabet: str = ALNUM) -> st.SearchStrategy[str]:
    """Random text that has a letter and a digit (as real tokens do)."""
    return st.builds(
        lambda a, b: a + "Q7" + b,
        st.text(alphabet=alphabet, min_size=min_size, max_size=max_size),
        st.text(alphabet=alphabet, max_size=8),
    )


_B64URL = ALNUM + "-_"


def _made(min_size: int, max_size: int) -> st.SearchStrategy[str]:
    """A password as a person or generator makes one: upper and lower case and a digit, maybe
    symbols (the shape prose rules take where plain words are common, ``passwd X``)."""
    return st.builds(
        lambda a, b: "Qx7" + a + b,
        st.text(alphabet=ALNUM, min_size=min_size, max_size=max_size),
        st.text(alphabet=ALNUM + "!#%^*-_@", max_size=8),
    )


def _random_token(min_size: int, max_size: int, alphabet: str = ALNUM) -> st.SearchStrategy[str]:
    """A token as a provider makes one: random characters (drawn from a seed, so shrinking
    keeps them random) with a letter and a digit."""

    def token(seed: int, size: int) -> str:
        digest = hashlib.sha512(str(seed).encode()).digest()
        return "Q7" + "".join(alphabet[b % len(alphabet)] for b in digest[:size])

    return st.tuples(st.integers(0, 2**32), st.integers(min_size, max_size)).map(
        lambda t: token(*t)
    )


_VALUE = ALNUM + "+/=!#%^*-_@~"

#: (secret text, its body) pairs: a body is what must never survive
SECRET_STRATEGIES = {
    "github": _mixed(34, 50).map(lambda b: (f"ghp_{b}", b)),
    "github-pat": _mixed(30, 60, ALNUM + "_").map(lambda b: (f"github_pat_{b}", b)),
    "aws": st.tuples(
        st.text(alphabet=string.ascii_uppercase + string.digits, min_size=16, max_size=16),
        st.sampled_from(["", "_old", "XYZ"]),
    ).map(lambda t: (f"AKIA{t[0]}{t[1]}", t[0] + t[1])),
    "anthropic": _mixed(40, 90, _B64URL).map(lambda b: (f"sk-ant-api03-{b}", b)),
    "openai": _mixed(40, 80, _B64URL).map(lambda b: (f"sk-proj-{b}", b)),
    "google": st.text(alphabet=_B64URL, min_size=35, max_size=45).map(lambda b: (f"AIza{b}", b)),
    "slack": _mixed(20, 40).map(lambda b: (f"xoxb-123456789012-{b}", b)),
    "stripe": _mixed(22, 40).map(lambda b: (f"sk_live_{b}", b)),
    "jwt": st.tuples(_mixed(10, 30, _B64URL), _mixed(10, 60, _B64URL), _mixed(10, 40, _B64URL)).map(
        lambda t: (f"eyJ{t[0]}.eyJ{t[1]}.{t[2]}", f"{t[1]}.{t[2]}")
    ),
    "bearer": _mixed(16, 60).map(lambda b: (f"Authorization: Bearer {b}", b)),
    "url": _mixed(6, 30, ALNUM + "!*~-").map(lambda b: (f"postgres://app:{b}@db.internal/x", b)),
    "env": _mixed(6, 40, _VALUE).map(lambda b: (f"DB_PASSWORD={b}", b)),
    "json": _mixed(6, 40, _VALUE + " ").map(lambda b: (f'"client_secret": "{b}"', b)),
    "pem": _mixed(40, 200, ALNUM + "+/\n").map(
        lambda b: (f"-----BEGIN RSA PRIVATE KEY-----\n{b}\n-----END RSA PRIVATE KEY-----", b)
    ),
    "private": _mixed(8, 60, ALNUM + " .,\n").map(lambda b: (f"<private>{b}</private>", b)),
    "private-attr": _mixed(8, 60, ALNUM + " .,\n").map(
        lambda b: (f"<private reason='x'>{b}</private>", b)
    ),
    "slack-app": _mixed(20, 40).map(lambda b: (f"xapp-1-A0123456789-{b}", b)),
    "google-client-secret": _mixed(24, 32, _B64URL).map(lambda b: (f"GOCSPX-{b}", b)),
    "twilio": st.text(alphabet="0123456789abcdef", min_size=32, max_size=32).map(
        lambda h: (f"SK{h}", h)
    ),
    "env-glued": _mixed(6, 40, _VALUE).map(lambda b: (f"PGPASSWORD={b}", b)),
    "url-reserved": _mixed(6, 30, ALNUM + "#/?@!").map(
        lambda b: (f"postgres://app:p{b}@db.internal/x", b)
    ),
    "curl-user": _mixed(6, 30, ALNUM + "!#%^*").map(lambda b: (f"curl -u admin:{b} https://h", b)),
    "mysql": _mixed(6, 30).map(lambda b: (f"mysql -u root -p{b} app", b)),
    "sshpass": _mixed(6, 30).map(lambda b: (f"sshpass -p '{b}' ssh host", b)),
    "prose": _mixed(6, 30).map(lambda b: (f"the password is {b}", b)),
    # issue 16: the kinds that survived the hold-out corpus
    "aws-secret-prose": _random_token(36, 40, ALNUM + "+/").map(
        lambda b: (f"its secret is {b}", b)
    ),
    "huggingface": _mixed(32, 36).map(lambda b: (f"hf_{b}", b)),
    "digitalocean": st.tuples(
        st.sampled_from("opr"), st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
    ).map(lambda t: (f"do{t[0]}_v1_{t[1]}", t[1])),
    "discord": st.tuples(
        st.integers(10**16, 10**20 - 1),
        st.text(alphabet=_B64URL, min_size=6, max_size=6),
        _mixed(25, 36, _B64URL),
    ).map(
        lambda t: (
            base64.b64encode(str(t[0]).encode()).decode().rstrip("=") + f".{t[1]}.{t[2]}",
            t[2],
        )
    ),
    # issue 45 item 5: a Discord bot token by the scanners' shape (its first part not the
    # base64 of an id), Telegram bot tokens
    "discord-shape": st.tuples(
        st.sampled_from("MNO"),
        _random_token(21, 23, _B64URL),
        _random_token(4, 4, _B64URL),
        _random_token(25, 36, _B64URL),
    ).map(lambda t: (f"{t[0]}{t[1]}.{t[2]}.{t[3]}", t[3])),
    "telegram": st.tuples(st.integers(10**6, 10**10 - 1), _random_token(32, 32, _B64URL)).map(
        lambda t: (f"{t[0]}:A{t[1]}", t[1])
    ),
    "keytool": st.tuples(
        st.sampled_from(["storepass", "keypass", "srcstorepass"]), _mixed(6, 30, ALNUM + "!#%^*@")
    ).map(lambda t: (f"keytool -list -keystore k.jks -{t[0]} {t[1]} -v", t[1])),
    "prose-for-host": st.tuples(
        st.sampled_from(["root@10.0.0.5", "deploy@web-01", "the db"]), _mixed(6, 30)
    ).map(lambda t: (f"the ssh password for {t[0]} is {t[1]}", t[1])),
    "prose-credentials": _mixed(6, 30, ALNUM + "!#%^*").map(
        lambda b: (f"use credentials admin / {b}", b)
    ),
    "prose-log-in-as": _mixed(6, 30).map(lambda b: (f"log in as deploy, password {b}", b)),
    "prose-pw": _mixed(6, 30).map(lambda b: (f"the root pw is {b}", b)),
    "entropy-near-token": st.tuples(
        st.sampled_from(["token", "secret", "API key", "credential"]), _random_token(24, 48)
    ).map(lambda t: (f"the {t[0]} for prod is {t[1]}", t[1])),
    # the review of prose forms: spaced passwd/pwd, quoted values, the value before the word,
    # "the secret is X", other languages
    "passwd-spaced": st.tuples(
        st.sampled_from(["passwd", "pwd", "PASSWD", "new password"]), _made(6, 30)
    ).map(lambda t: (f"{t[0]} {t[1]}", t[1])),
    "prose-quoted": st.tuples(
        st.sampled_from(
            [
                "The password is: '{}'",
                'the password is "{}"',
                "auth failed for password '{}'",
                "bad passphrase `{}`",
                "rejected token '{}'",
                'wrong secret "{}"',
            ]
        ),
        _made(6, 30),
    ).map(lambda t: (t[0].format(t[1]), t[1])),
    "value-before-word": st.tuples(
        st.sampled_from(
            [
                "Use {} as the password",
                "use {} as password",
                "set {} as the root password",
                "use {} as the API key",
                "pass {} as the token",
            ]
        ),
        _made(6, 30),
    ).map(lambda t: (t[0].format(t[1]), t[1])),
    "prose-secret-is": st.tuples(
        st.sampled_from(
            [
                "The secret is",
                "the token is",
                "the API key is",
                "the webhook secret is:",
                "the GitHub token for CI is",
            ]
        ),
        _made(6, 30),
    ).map(lambda t: (f"{t[0]} {t[1]}", t[1])),
    "prose-foreign": st.tuples(
        st.sampled_from(
            [
                "le mot de passe est",
                "Mot de passe :",
                "la contraseña es",
                "das Passwort ist",
                "Das Passwort lautet",
                "a senha é",
                "A palavra-passe é",
                "la password è",
                "het wachtwoord is",
            ]
        ),
        _made(6, 30),
    ).map(lambda t: (f"{t[0]} {t[1]}", t[1])),
    "pair-text": st.tuples(
        st.sampled_from(
            [
                '{{"name": "DB_PASSWORD", "value": "{}"}}',
                '{{"Name": "API_TOKEN", "Value": "{}"}}',
                "- name: DB_PASSWORD\n  value: {}\n",
                '{{"key": "client_secret", "value": "{}"}}',
            ]
        ),
        _mixed(6, 30),
    ).map(lambda t: (t[0].format(t[1]), t[1])),
}
#: kinds whose whole token run is redacted even when glued to neighbouring letters (B33)
GLUABLE = {
    "github",
    "aws",
    "anthropic",
    "openai",
    "google",
    "slack",
    "stripe",
    "jwt",
    "slack-app",
    "google-client-secret",
}

_MARKER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")
_noise = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
_separator = st.sampled_from([" ", "\n", "\t", "(", ")", ",", ";", "'", '"', "[", "]", "<", ">"])


def _assert_gone(body: str, out: str, around: str) -> None:
    out = _MARKER.sub("\0", out)  # a body may hold "edential" of "[REDACTED:credential]"
    for i in range(len(body) - 7):
        piece = body[i : i + 8]
        assert piece in around or piece not in out, f"{piece!r} survived in {out!r}"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(sorted(SECRET_STRATEGIES)),
    data=st.data(),
    before=_noise,
    after=_noise,
    left=_separator,
    right=_separator,
)
def test_redact_property_secret_never_survives(kind, data, before, after, left, right):
    """A secret embedded anywhere in random text loses every 8-character piece of its body."""
    secret, body = data.draw(SECRET_STRATEGIES[kind])
    out = redact(before + left + secret + right + after)
    _assert_gone(body, out, before + after)


@settings(max_examples=40, deadline=None)
@given(
    kind=st.sampled_from(sorted(GLUABLE)),
    data=st.data(),
    before=st.text(alphabet=ALNUM, max_size=6),
    after=st.text(alphabet=ALNUM, max_size=6),
)
def test_redact_property_glued_token_never_survives(kind, data, before, after):
    """A token glued to letters and digits on either side is still replaced whole (B33)."""
    secret, body = data.draw(SECRET_STRATEGIES[kind])
    out = redact(before + secret + after)
    _assert_gone(body, out, before + after)


_benign_alphabet = string.ascii_lowercase + string.digits + " \n.,/()"
_words = st.sampled_from(
    [
        "token",
        "password",
        "secret",
        "key",
        "credential",
        "auth",
        "the",
        "rotate",
        "expired",
        "tokens",
        "api",
        "passed",
        "keys",
    ]
)
_hex = st.text(alphabet="0123456789abcdef", min_size=40, max_size=40)
_sha256 = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
_uuid = st.uuids().map(str)
_path = st.lists(
    st.text(alphabet=string.ascii_lowercase + "_-", min_size=1, max_size=12), min_size=1, max_size=8
).map(lambda parts: "/" + "/".join(parts))
_words_text = st.lists(
    st.sampled_from(
        ["the", "build", "passed", "and", "secret", "sauce", "is", "love", "token", "rotation"]
    ),
    min_size=3,
    max_size=8,
).map(" ".join)
#: issue 16: base64 of ordinary text, file names, identifiers, env names and UUIDs right after
#: secret-ish words (the entropy rule's look-alikes)
_lookalike = st.one_of(
    _hex,
    _sha256,
    _uuid,
    _path,
    _words_text.map(lambda t: base64.b64encode(t.encode()).decode()),
    st.tuples(_path, st.sampled_from([".py", ".txt", ".md", ".json"])).map(
        lambda t: t[0].lstrip("/") + t[1]
    ),
    st.lists(
        st.sampled_from(["required", "Characteristic", "Types", "For", "Display", "Meta"]),
        min_size=3,
        max_size=6,
    ).map("".join),
    st.lists(
        st.sampled_from(["MY", "SERVICE", "ACCESS", "TOKEN", "2024", "PROD"]),
        min_size=3,
        max_size=6,
    ).map("_".join),
)
_secret_word = st.sampled_from(
    [
        "token",
        "secret",
        "the API key",
        "password",
        "pw",
        "credentials",
        "its secret is",
        "the token for prod is",
        "password reset",
        "passwd",
        "pwd",
        "the secret is",
        "the token is",
        "the API key is",
        "the password is:",
        "le mot de passe est",
        "Passwort ist",
        "la contraseña es",
        "a senha é",
    ]
)


@settings(max_examples=80, deadline=None)
@given(text=st.text(alphabet=_benign_alphabet, max_size=200))
def test_redact_property_random_benign_text_unchanged(text):
    """Random text without secrets comes back unchanged."""
    assert redact(text) == text


@settings(max_examples=80, deadline=None)
@given(
    parts=st.lists(st.one_of(_words, _hex, _sha256, _uuid, _path), max_size=20),
    sep=st.sampled_from([" ", "\n", ", "]),
)
def test_redact_property_benign_lookalikes_unchanged(parts, sep):
    """Prose about tokens mixed with SHAs, digests, UUIDs and paths survives byte-identical."""
    text = sep.join(parts)
    assert redact(text) == text


@settings(max_examples=150, deadline=None)
@given(
    pairs=st.lists(st.tuples(_secret_word, _lookalike), min_size=1, max_size=6),
    sep=st.sampled_from([" ", "\n", ", ", ". "]),
)
def test_redact_property_lookalikes_after_secret_words_unchanged(pairs, sep):
    """Issue 16: SHAs, UUIDs, paths, file names, identifiers and base64 of plain text right after
    a secret-ish word survive byte-identical (the entropy rule takes only random tokens)."""
    text = sep.join(f"{word} {value}" for word, value in pairs)
    assert redact(text) == text


#: what follows "the password is" / "mot de passe est" in ordinary text: plain words in
#: several languages, folders, references (a letter and a digit make a password there)
_plain_word = st.one_of(
    st.sampled_from(
        [
            "wrong",
            "out",
            "required",
            "missing",
            "incorrect",
            "falsch",
            "obligatoria",
            "inválida",
            "sbagliata",
            "vergeten",
            "it",
            "bcrypt",
            "hunter",
            "Hunter",
            "requiredCharacteristic",
            "$DB_PASSWORD",
            "<password>",
            "/home/dev",
            "~/src/app2",
        ]
    ),
    _path,
)
#: what follows passwd / pwd / "the secret is" / "as the password …": also user names with
#: digits, flags, technical terms, code, e-mail addresses, digests
_plain_value = st.one_of(
    _plain_word,
    _hex,
    _uuid,
    st.sampled_from(
        [
            "root",
            "alice",
            "deploy01",
            "user01",
            "-l alice",
            "-S bob",
            "./build",
            "then ls",
            "argon2id",
            "Base64Encoded",
            "utf8mb4-safe",
            "SHA256-hashed",
            "ops@example.com",
            "VARCHAR(255)",
            "x86_64-linux",
            "gpt4o-mini",
        ]
    ),
)
_plain_pair = st.one_of(
    st.tuples(
        st.sampled_from(
            [
                "passwd {}",
                "pwd {}",
                "run pwd {}",
                "sudo passwd {}",
                "The secret is {}",
                "the token is {}",
                "the API key is {}",
                "unexpected token '{}'",
                "use {} as the password field",
                "use {} as the password hash",
                "use {} as the API key header",
            ]
        ),
        _plain_value,
    ),
    st.tuples(
        st.sampled_from(
            [
                "The password is {}",
                "the password is: '{}'",
                "auth failed for password '{}'",
                "le mot de passe est {}",
                "Passwort ist {}",
                "la contraseña es {}",
                "a senha é {}",
                "la password è {}",
                "het wachtwoord is {}",
                "use {} as the password",
            ]
        ),
        _plain_word,
    ),
)


@settings(max_examples=150, deadline=None)
@given(
    pairs=st.lists(_plain_pair, min_size=1, max_size=5),
    sep=st.sampled_from([" ", "\n", ", ", ". "]),
)
def test_redact_property_plain_values_after_secret_phrases_unchanged(pairs, sep):
    """The review of prose forms: user names, flags, folders and plain words after passwd,
    pwd, "the secret is", "as the password …" and other languages' password words survive
    byte-identical (only made values go)."""
    text = sep.join(phrase.format(value) for phrase, value in pairs)
    assert redact(text) == text


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(sorted(SECRET_STRATEGIES)), data=st.data(), before=_noise)
def test_redact_property_idempotent(kind, data, before):
    """redact(redact(t)) == redact(t)."""
    secret, _ = data.draw(SECRET_STRATEGIES[kind])
    once = redact(before + " " + secret)
    assert redact(once) == once


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(sorted(SECRET_STRATEGIES)),
    data=st.data(),
    before=_noise,
    middle=_noise,
    after=_noise,
    left=_separator,
    right=_separator,
    copies=st.integers(min_value=1, max_value=3),
)
def test_redact_property_a_redacted_value_never_appears(
    kind, data, before, middle, after, left, right, copies
):
    """A value redacted once (8 characters or more) appears nowhere in the output, however
    often and wherever else the text repeats it; and redacting again changes nothing."""
    secret, _ = data.draw(SECRET_STRATEGIES[kind])
    first = before + left + secret + right + middle
    values = [first[f.start : f.end].strip() for f in find_secrets(first)]
    values = [v for v in values if len(v) >= 8]
    text = first + "".join(f"{left}{v}{right}{after}" for v in values * copies)
    out = redact(text)
    assert redact(out) == out
    shown = _MARKER.sub("\0", out)
    for f in find_secrets(text):
        value = text[f.start : f.end].strip()
        if len(value) >= 8:
            assert value not in shown, f"{value!r} survived in {out!r}"


def test_redact_env_double_equals_value():
    """Found by the property test: ``NAME==value`` in env form assigns "=value", redacted whole."""
    assert redact(" DB_PASSWORD==00000Q7 ") == " DB_PASSWORD=[REDACTED:password] "
    assert redact("if password == x:") == "if password == x:"


# ---------------------------------------------------------------------------- review gaps


@pytest.mark.parametrize(
    "name", ["PGPASSWORD", "MYSQL_PWD", "REDISPASSWD", "LDAPBINDPWD", "DB_ROOT_PASSWORD"]
)
def test_redact_env_names_holding_password(name):
    """Env names that only hold a password word glued to a prefix (PGPASSWORD) are secret."""
    assert redact(f"{name}=S3cretPass99 psql") == f"{name}=[REDACTED:password] psql"


def test_redact_shell_pwd_directory_kept():
    """PWD and OLDPWD holding a directory are the shell's working directory, not a password."""
    text = "PWD=/home/dev/project\nOLDPWD=~/src"
    assert redact(text) is text


def test_redact_curl_user_keeps_user_name():
    """curl -u/--user: the password after the first colon goes, the user name stays."""
    assert redact("curl -u admin:Passw0rd123 https://h") == (
        "curl -u admin:[REDACTED:password] https://h"
    )
    assert redact("curl --user admin:Passw0rd123 https://h") == (
        "curl --user admin:[REDACTED:password] https://h"
    )
    assert redact("curl -s --user=ops:letmein https://h") == (
        "curl -s --user=ops:[REDACTED:password] https://h"
    )


def test_redact_user_flag_outside_http_clients_kept():
    """Docker's -u uid:gid and --user app:app, and git push -u, are not credentials."""
    text = "docker run -u 1000:1000 --user app:app img && git push -u origin main"
    assert redact(text) is text


@pytest.mark.parametrize(
    "text,expected",
    [
        ("postgres://a:hunter#2xyz@db/app", "postgres://a:[REDACTED:url-credential]@db/app"),
        ("https://u:p/a?ss@host/x", "https://u:[REDACTED:url-credential]@host/x"),
        (
            "mysql://app:p@ss/w0rd@db.internal:3306/app",
            "mysql://app:[REDACTED:url-credential]@db.internal:3306/app",
        ),
    ],
)
def test_redact_url_password_with_reserved_characters(text, expected):
    """A URL password holding # / ? @ unescaped goes up to the last @ before the host."""
    assert redact(text) == expected


def test_redact_url_port_and_path_at_kept():
    """A port followed by a path holding @ (medium.com:443/@user) is no password."""
    text = "https://medium.com:443/@user/post http://localhost:8080/a?u=bob@example.com"
    assert redact(text) is text


def test_redact_slack_app_token_and_google_client_secret():
    """Slack app-level tokens and Google OAuth client secrets are replaced whole."""
    assert redact("xapp-1-A0123456789-1234567890123-abcdef0123456789abcdef") == (
        "[REDACTED:slack-token]"
    )
    assert redact("secret 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.") == (
        "secret [REDACTED:google-oauth-secret]."
    )


@pytest.mark.parametrize(
    "text,expected",
    [
        ("mysql -u root -pS3cretPass77 app", "mysql -u root -p[REDACTED:password] app"),
        ("mysql --password=S3cretPass77", "mysql --password=[REDACTED:password]"),
        ("sshpass -p 'secret' ssh host", "sshpass -p '[REDACTED:password]' ssh host"),
        ("sshpass -pS3cret ssh -p 2222 host", "sshpass -p[REDACTED:password] ssh -p 2222 host"),
        ("mysql -u root -p app", "mysql -u root -p app"),
        ("mysql -u root -p$MYSQL_PWD app", "mysql -u root -p$MYSQL_PWD app"),
        ('sshpass -p "$SSHPASS" ssh host', 'sshpass -p "$SSHPASS" ssh host'),
        ("ls -p; mkdir -p build", "ls -p; mkdir -p build"),
    ],
)
def test_redact_command_line_passwords(text, expected):
    """mysql's glued -p and sshpass -p lose their password; prompts and $VARs stay."""
    assert redact(text) == expected


def test_redact_twilio_key_but_not_account_sid():
    """SK + 32 lowercase hex is a Twilio API key; an AC account SID and other shapes stay."""
    assert redact("key SK0123456789abcdef0123456789abcdef ok") == "key [REDACTED:twilio-key] ok"
    kept = (
        "AC0123456789abcdef0123456789abcdef SK0123456789ABCDEF0123456789ABCDEF "
        "TASK0123456789abcdef0123456789abcdef SK0123456789abcdef0123456789abcdef0"
    )
    assert redact(kept) is kept


def test_redact_private_tag_with_attributes():
    """<private …> with attributes is a private span like <private>; <private_data> is not."""
    assert redact("a <private reason='x'>code 4411</private> b") == "a [REDACTED:private] b"
    assert redact('a <private scope="s">\nrest') == "a [REDACTED:private]"
    kept = "<private_data>ok</private_data>"
    assert redact(kept) is kept


@pytest.mark.parametrize(
    "text,expected",
    [
        ("the password is hunter2xyz", "the password is [REDACTED:password]"),
        ("Password was set to 'aB3dEfGh'.", "Password was set to '[REDACTED:password]'."),
        ("password: Tr0ub4dor&3", "password: [REDACTED:password]"),
        ("the passphrase is `S3cret!x` now", "the passphrase is `[REDACTED:password]` now"),
        ("the password is in the vault", "the password is in the vault"),
        ("The password is required", "The password is required"),
        ("The password is Hunter", "The password is Hunter"),
    ],
)
def test_redact_prose_password_only_when_machine_like(text, expected):
    """A password named in prose goes when it has a digit or mixed case; plain words stay."""
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "task-8f14e45fceea167a5a36dedd4bea2543",
        "disk-0a1b2c3d4e5f6a7b8c9d",
        "risk-3f2a9c1e0b7d4a6f8e5c2b1a0d9e8f7c",
        "SORT_KEY=created_at_desc_2024",
        "/bearer 0000000000000000000000000000000000000000",
    ],
)
def test_redact_review_false_positives_kept(text):
    """Ids ending in "sk-<hex>", a KEY holding snake_case words and a /bearer path stay."""
    assert redact(text) is text


def test_redact_sk_legacy_needs_token_start():
    """A legacy sk- key is found at a token start (or glued, with OpenAI's T3BlbkFJ marker)."""
    body = "8f14e45fceea167a5a36dedd4bea2543"
    assert redact(f"key=sk-{body}") == "key=[REDACTED:openai-key]"
    assert redact(f"xsk-{body[:10]}T3BlbkFJ{body[10:]}") == "[REDACTED:openai-key]"


def test_redact_format_like_value_with_made_rest():
    """Found by the property test: a quoted secret holding "%d" is not a format template."""
    assert redact('"client_secret": "000000Q7%d"') == '"client_secret": "[REDACTED:secret]"'
    assert redact('upgrade_token="%s_upgrades"') == 'upgrade_token="%s_upgrades"'


def test_redact_public_names_stay_in_redact():
    """The split keeps Finding, find_secrets, redact, redact_all and marker importable from
    continuity.redaction.funnel (and shown_query, the messages' echo of a query); Finding is
    the one class the key = value detectors build."""
    import continuity.redaction.funnel as red
    import continuity.redaction.keyed as kv

    assert sorted(red.__all__) == [
        "Finding",
        "find_secrets",
        "marker",
        "redact",
        "redact_all",
        "shown_query",
    ]
    assert red.Finding is kv.Finding
    assert red.marker("password") == "[REDACTED:password]"
    assert red.find_secrets("DB_PASSWORD=hunter2xyz") == [red.Finding(12, 22, "password", 1)]


# ---------------------------------------------------------------------------- issue 16

_B = "Zx8fK2mQ9vLr4TnB7wYc1HdS6gPa3JeU0kNo5RtVAbCdEfGhIjKlMnOpQrStUvWxYz"  # 66 alphanumerics
_H = "0123456789abcdef" * 4


@pytest.mark.parametrize(
    "token,kind",
    [
        ("glptt-" + _B[:20], "gitlab-token"),
        ("glrt-" + _B[:20], "gitlab-token"),
        ("pypi-AgEIcHlwaS5vcmc" + _B[:50], "pypi-token"),
        ("lin_api_" + _B[:40], "linear-key"),
        ("dp.pt." + _B[:43], "doppler-token"),
        ("PMAK-" + _H[:24] + "-" + _H[:34], "postman-key"),
        ("ATATT3xFfGF0" + (_B * 3)[:180], "atlassian-token"),
        ("AGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2, "age-secret-key"),
        ("glsa_" + _B[:32] + "_" + _H[:8], "grafana-token"),
        ("glc_" + _B[:40], "grafana-token"),
        ("sntryu_" + _H, "sentry-token"),
        ("NRAK-" + _B[:27].upper(), "newrelic-key"),
        ("HRKU-AA" + _B[:58], "heroku-key"),
        ("sq0atp-" + _B[:22], "square-token"),
        ("sbp_" + _H[:40], "supabase-token"),
        ("r8_" + _B[:37], "replicate-token"),
        ("pscale_tkn_" + _B[:43], "planetscale-token"),
        ("xai-" + _B[:64] + "AB", "xai-key"),
        ("pplx-" + _B[:48], "perplexity-key"),
        ("fo1_" + _B[:43], "flyio-token"),
    ],
)
def test_redact_gitleaks_token_shapes(token, kind):
    """Issue 16: the token shapes of the gitleaks rule set (our own patterns) are replaced
    whole, with their kind."""
    assert redact(f"use {token} now") == f"use [REDACTED:{kind}] now"


@pytest.mark.parametrize(
    "text",
    [
        "visit the password reset page",
        "git rev-parse HEAD gives 3f2a9c1e0b7d4a6f8e5c2b1a0d9e8f7c6b5a4d3e",
        "token for session 5c0375b4-57a5-4f26-b12d-d022ee4e51b7",
        "the secret is in docs/ops/secrets.md",
        "the token is aGVsbG8gd29ybGQsIHRoaXMgaXMgcGxhaW4gdGV4dA== (base64 of a greeting)",
    ],
)
def test_redact_issue16_lookalikes_kept(text):
    """Issue 16: look-alikes next to secret words (reset pages, SHAs, UUIDs, paths, base64 of
    plain text) come back as the same object."""
    assert redact(text) is text


def test_redact_discord_token_at_sentence_end_but_not_in_dotted_names():
    """A Discord bot token before a full stop goes; a dotted name that only has its shape (its
    first part not the base64 of an id) stays."""
    tok = (
        base64.b64encode(b"1087654321123456789").decode().rstrip("=")
        + ".GhIjKl.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789ab"
    )
    assert redact(f"the bot token is {tok}.") == "the bot token is [REDACTED:discord-token]."
    kept = "see aGVsbG8gd29ybGQgaGVsbG8gd29y.abcdef.AbCdEfGhIjKlMnOpQrStUvWxYz01 here"
    assert redact(kept) is kept


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (" Use Qx7000000 as the password :", " Use [REDACTED:password] as the password :"),
        ("Use Qx7000000 as the password:\nnext", "Use [REDACTED:password] as the password:\nnext"),
        ("use Kp9xZ2q7 as the API key :", "use [REDACTED:api-key] as the API key :"),
        ("Use Qx7000000 as the password :0", "Use [REDACTED:password] as the password :0"),
        (
            " Use Qx7000000 as the password 00000A",
            " Use [REDACTED:password] as the password 00000A",
        ),
        ("the password :", "the password :"),
    ],
)
def test_value_named_before_a_key_with_an_empty_separator(text: str, want: str) -> None:
    """``Use X as the password :``: the separator after the word has no value, so the value
    is the one named before it (found by ``test_redact_property_secret_never_survives``)."""
    assert redact(text) == want


@settings(max_examples=200, deadline=None)
@given(
    payload=st.binary(min_size=200, max_size=3000),
    wrap=st.sampled_from(
        [
            "{}",
            "data:image/png;base64,{}",
            '{{"type": "image", "data": "{}"}}',
            "![x](data:image/jpeg;base64,{})",
        ]
    ),
)
def test_redact_property_base64_payload_unchanged(payload, wrap):
    """Issue 45 item 5: the base64 of any bytes (an image, a file) is no secret: a word such as
    ``Pw`` or ``key`` inside it never starts a key or a password."""
    text = wrap.format(base64.b64encode(payload).decode())
    assert redact(text) is text


@pytest.mark.parametrize(
    "secret", ["DB_PASSWORD=S3cretXx9q", '"api_key": "k-9f8e7d6c5b4a"', "password hunter2xyz9"]
)
def test_redact_secret_beside_base64_payload_still_found(secret):
    """A real secret right after an image's base64 (one space between) still goes."""
    image = base64.b64encode(bytes(range(256)) * 4).decode()
    out = redact(f"data:image/png;base64,{image} {secret}")
    assert out.startswith(f"data:image/png;base64,{image} ") and "[REDACTED:" in out
    assert secret.split("=")[-1].split()[-1].strip('"') not in out


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # issue 45 review item 3: a quoted passphrase after "password is", and "api key: X"
        ('password is "spaced secret phrase here"', 'password is "[REDACTED:password]"'),
        (
            "the password was 'correct horse battery staple'",
            "the password was '[REDACTED:password]'",
        ),
        ("api key: Hotel9secretZ", "api key: [REDACTED:api-key]"),
        ("the API key = Hotel9secretZ ok", "the API key = [REDACTED:api-key] ok"),
        ('api key: "abc def ghi"', 'api key: "[REDACTED:api-key]"'),
        # issue 45 leftover: no separator at all, or "is"
        ("my api key Hotel9secretZ works", "my api key [REDACTED:api-key] works"),
        ("the API key is Hotel9secretZ", "the API key is [REDACTED:api-key]"),
        ("set the api key Xk9#mLq2vB now", "set the api key [REDACTED:api-key] now"),
    ],
)
def test_quoted_passphrase_and_api_key_colon_are_redacted(text, want):
    assert redact(text) == want


@pytest.mark.parametrize(
    "kept",
    [
        'password is "wrong"',
        'password is "not set"',
        'password is "your password here"',
        "api key: none",
        "api key: see below",
        "the api key: production",
        "api key rotation is due",
        'the API key "rotation" job',
        "api key abc",
        "the api key is set",
    ],
)
def test_plain_words_after_password_is_and_api_key_stay(kept):
    assert redact(kept) == kept


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        # the property test's find: a sentence run on after the password read as a file name
        (
            " use credentials admin / 000000Q7(.A",
            " use credentials admin / [REDACTED:password](.A",
        ),
        ("use credentials admin / 000000Q7.A", "use credentials admin / [REDACTED:password].A"),
        (
            "creds are admin:Xk39fj2kq.Then we went",
            "creds are admin:[REDACTED:password].Then we went",
        ),
        # a file name after the user stays: its stem is a word
        ("use credentials admin / notes.txt", "use credentials admin / notes.txt"),
    ],
)
def test_a_password_run_into_the_next_sentence_is_not_a_file_name(text, redacted):
    assert redact(text) == redacted


def test_value_named_before_the_password_word_is_the_only_one_even_when_redacted():
    """Found by the property test (``redact`` must give the same text again): "Use X as the
    password Y" redacts X, the value the sentence names; a second pass saw the marker before
    the word, no value, and took Y. A marker before the word now stands for the value."""
    text = " Use Qx7000000 as the password 00000A Qx7000000 "
    once = redact(text)
    assert once == " Use [REDACTED:password] as the password 00000A [REDACTED:password] "
    assert redact(once) == once
    sep = redact(" Use Qx7000000 as the password: 00000A ")
    assert sep == " Use [REDACTED:password] as the password: 00000A "
    assert redact(sep) == sep
    # without a value before the word, the word after it is still the password
    assert redact("set the password 7Gq2xk9Lw to log in") == (
        "set the password [REDACTED:password] to log in"
    )
