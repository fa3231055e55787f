"""``continuity.cli.coerce``: every parameter of every command coerces a value exactly as
Typer's own pydantic adapter does (the same value, or the same error)."""

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


@pytest.mark.parametrize("cmd,name,param", PARAMS, ids=[p[1] for p in PARAMS])
def test_same_outcome_as_typers_adapter(cmd, name, param):
    ctx = Context(cmd, info_name=cmd.name)
    fast = FastRuntimeParam(param)
    real = build_runtime_param(param.type_descriptor)
    for value in VALUES:
        if (param.multiple or param.nargs == -1) and value is not None:
            value = [value] if not isinstance(value, str) else [value, value]
        assert _outcome(fast, value, param, ctx) == _outcome(real, value, param, ctx), value
    if param.multiple or param.nargs == -1:  # empty, mixed and tuple forms too
        for value in [(), [], ("a",), ("a", 3), ["a", None], ("x", "naïve", "")]:
            assert _outcome(fast, value, param, ctx) == _outcome(real, value, param, ctx), value


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
