"""``continuity.cli.coerce``: every parameter of every command coerces a value exactly as
Typer's own pydantic adapter does (the same value, or a usage error where it gives one, worded
as the CLI's errors rather than pydantic's)."""

from __future__ import annotations

import pytest
from typer._click import Context
from typer._coercion import build_runtime_param

from continuity.cli.coerce import FastRuntimeParam

VALUES = [
    None,
    "",
    "0",
    "1",
    "5",
    "01",
    "007",
    "-1",
    "+1",
    " 5",
    "5 ",
    "1_000",
    "1e3",
    "1.0",
    "abc",
    "50",
    "1000000",
    "1000001",
    "999999999999999999",
    "9223372036854775808",
    "99999999999999999999",
    "²",
    "١٢",
    0,
    3,
    -4,
    10**13,
    True,
    False,
    2.5,
    "/tmp/x",
    "~/ws",
    ".",
    "codex",
    "CODEX",
    "claude-code",
    "pi",
    "extractive",
    "OpenAI",
    "x" * 300,
    "naïve",
]


def _params():
    from continuity.cli.app import command

    found = []

    def walk(cmd, path):
        subs = getattr(cmd, "commands", None)
        if subs:
            for name in list(subs):
                walk(subs[name], [*path, name])
        for param in cmd.params:
            if hasattr(param, "type_descriptor"):
                found.append((cmd, " ".join(path) + ":" + param.name, param))

    walk(command(), [])
    return found


PARAMS = _params()


def _outcome(runtime, value, param, ctx):
    try:
        return ("ok", type(value := runtime.coerce(value, param=param, ctx=ctx)), value)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        return ("error", type(exc), message)


#: Pydantic's own words, which never reach a user (fresh-user review).
PYDANTIC_WORDS = ("Input should", "Value error,", "unable to parse")


def _same(fast, real, value, param, ctx):
    """The same value, or an error of the same type where Typer's adapter gives one: its
    message when it is not pydantic's, else one in the CLI's words."""
    got, expected = _outcome(fast, value, param, ctx), _outcome(real, value, param, ctx)
    if expected[0] == "ok" or not any(w in expected[2] for w in PYDANTIC_WORDS):
        assert got == expected, value
    else:
        assert got[:2] == expected[:2], value
        assert not any(w in got[2] for w in PYDANTIC_WORDS), (value, got)


@pytest.mark.parametrize("cmd,name,param", PARAMS, ids=[p[1] for p in PARAMS])
def test_same_outcome_as_typers_adapter(cmd, name, param):
    ctx = Context(cmd, info_name=cmd.name)
    fast = FastRuntimeParam(param)
    real = build_runtime_param(param.type_descriptor)
    for value in VALUES:
        if (param.multiple or param.nargs == -1) and value is not None:
            value = [value] if not isinstance(value, str) else [value, value]
        _same(fast, real, value, param, ctx)
    if param.multiple or param.nargs == -1:  # empty, mixed and tuple forms too
        for value in [(), [], ("a",), ("a", 3), ["a", None], ("x", "naïve", "")]:
            _same(fast, real, value, param, ctx)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["search", "x", "-n", "501"],
            "error: Invalid value for '-n' / '--count': must be a whole number from 0 to 500 "
            "(got '501') (see continuity search --help)",
        ),
        (
            ["sessions", "-n", "abc"],
            "error: Invalid value for '-n' / '--count': must be a whole number from 0 to "
            "1,000,000 (got 'abc') (see continuity sessions --help)",
        ),
        (
            ["recall", "x", "--limit", "-1"],
            "error: Invalid value for '-n' / '--limit': must be a whole number from 0 to 100 "
            "(got '-1') (see continuity recall --help)",
        ),
        (
            ["brief", "--budget", "5"],
            "error: Invalid value for '--budget': must be a whole number from 200 to 10,000 "
            "(got '5') (see continuity brief --help)",
        ),
        (
            ["show", "K", "--tail", "-3"],
            "error: Invalid value for '--tail': must be a whole number from 0 to "
            "9,223,372,036,854,775,807 (got '-3') (see continuity show --help)",
        ),
        (
            ["watch", "--max-files", "0"],
            "error: Invalid value for '--max-files': must be a whole number, 1 or more "
            "(got '0') (see continuity watch --help)",
        ),
        (
            ["remember", "x", "--importance", "high"],
            "error: Invalid value for '--importance': must be a number (got 'high') "
            "(see continuity remember --help)",
        ),
        (
            ["usage", "--by", "year"],
            "error: Invalid value for '--by': 'year' is not one of 'day', 'week', 'month', "
            "'session', 'project', 'model', 'harness' (see continuity usage --help)",
        ),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else "",
)
def test_a_bad_value_names_the_option_and_its_values_in_plain_words(
    monkeypatch, capsys, argv, said
):
    """Fresh-user review: pydantic's "Input should be less than or equal to 500" reached
    users; the usage error names the option and what it takes, as the CLI's own errors do."""
    from tests.cli.running import run_main

    code, out, err = run_main(monkeypatch, capsys, *argv)
    assert (code, out, err) == (2, "", said + "\n")


def test_the_common_cases_need_no_adapter():
    kinds = {p.name: FastRuntimeParam(p).kind for _c, _n, p in PARAMS}
    assert kinds["home"] == "parser" and kinds["limit"] == "int" and kinds["session"] == "str"
    fast = next(FastRuntimeParam(p) for _c, n, p in PARAMS if n == "sessions:limit")
    assert fast.fast("7") == 7 and fast._real is None
    # issue 17: ``import PATHS...`` built pydantic's adapter on every run
    cmd, _n, param = next(x for x in PARAMS if x[1] == "import:paths")
    fast = FastRuntimeParam(param)
    got = fast.coerce(("a", "~/b"), param, Context(cmd, info_name=cmd.name))
    assert got == ["a", "~/b"] and type(got) is list and fast._real is None
    assert kinds["tags"] == "strs"
