"""Parameter coercion without pydantic for the values a command line usually holds (issue 17).

Typer (>= 0.29) coerces every parameter value through a pydantic ``TypeAdapter``, built on first
use: importing pydantic and building the adapters of one command costs about 100 ms, a quarter
of ``continuity sessions``. ``install(param)`` gives a Typer parameter a coercer that answers
the common cases itself, exactly as the adapter would:

* no value: ``None`` (``()`` for a multi-value parameter), as Typer does before any adapter;
* a ``str`` parameter given a ``str``: the value itself;
* an ``int`` parameter (optionally ``min``/``max``, never ``clamp``) given an ``int`` or plain
  ASCII digits (``0`` or no leading zero, at most 18 digits) within its range: that integer;
* a parameter with a ``parser=`` (``--home``): the parser's result, unless it raises
  ``ValueError``/``AssertionError`` (the errors Typer turns into a usage error);
* a multi-value ``List[str]`` parameter (``import PATHS...``, ``--tag``) given ``str`` values:
  a new list of them (the adapter's import was 7% of a re-import after an append).

Anything else (an out-of-range number, a negative one, an enum choice, a path, a list, a
parser's usage error) goes to Typer's own adapter, built then: the same value, or the same
usage error (exit 2), worded as the CLI words its errors (``plain_reason``: the allowed values
in plain words, ``must be a whole number from 0 to 500 (got '501')``, where pydantic said
"Input should be less than or equal to 500"). A Typer without this hook
(``_TyperParameter.get_runtime_param``) is left alone. ``tests/cli/test_coerce.py`` compares
both for every parameter of every command.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import NoneType, UnionType
from typing import Any, Union, get_args, get_origin

#: The answer "not a common case: ask Typer's adapter".
_ASK = object()


class FastRuntimeParam:
    """A Typer ``RuntimeParam`` for one parameter: the common cases (module docstring) without
    pydantic, the rest by Typer's own runtime parameter, built when first needed."""

    def __init__(self, param: Any) -> None:
        self.descriptor = param.type_descriptor
        info = self.descriptor.parameter_info
        annotation = self.descriptor.annotation
        self.parser = info.parser
        self.min, self.max = info.min, info.max
        self.kind = None
        if self.descriptor.file_annotation is not None:
            self.kind = None
        elif self.parser is not None:
            self.kind = "parser"
        elif annotation is str:
            self.kind = "str"
        elif annotation is int and not info.clamp:
            self.kind = "int"
        elif get_origin(annotation) is list and get_args(annotation) == (str,):
            self.kind = "strs"
        self._real: Any = None

    def real(self) -> Any:
        """Typer's own runtime parameter (pydantic), built on first use."""
        if self._real is None:
            from typer._coercion import build_runtime_param

            self._real = build_runtime_param(self.descriptor)
        return self._real

    def fast(self, value: Any) -> Any:
        """``value`` coerced, or ``_ASK`` when only Typer's adapter may answer."""
        if self.kind == "str":
            return value if type(value) is str else _ASK
        if self.kind == "int":
            if type(value) is str:
                if not (
                    value.isascii()
                    and value.isdigit()
                    and len(value) <= 18
                    and (value == "0" or value[0] != "0")
                ):
                    return _ASK
                value = int(value)
            elif type(value) is not int:
                return _ASK
            if (self.min is not None and value < self.min) or (
                self.max is not None and value > self.max
            ):
                return _ASK
            return value
        if self.kind == "parser":
            try:
                return self.parser(value)
            except (ValueError, AssertionError):  # Typer's adapter words the usage error
                return _ASK
        return _ASK

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        """``RuntimeParam.coerce``: the parameter's value, as Typer's adapter gives it."""
        multi = param.multiple or param.nargs == -1
        if value is None:
            return () if multi else None
        if (
            multi
            and self.kind == "strs"
            and type(value) in (list, tuple)
            and all(type(v) is str for v in value)
        ):
            return list(value)
        if not multi:
            done = self.fast(value)
            if done is not _ASK:
                return done
        from typer import BadParameter

        try:
            return self.real().coerce(value, param=param, ctx=ctx)
        except BadParameter as exc:
            from pydantic import ValidationError  # loaded already: the adapter raised it

            if not isinstance(exc.__cause__, ValidationError):
                raise
            found = exc.__cause__.errors()
            if not found:
                raise
            reason = plain_reason(found[0], value, self.descriptor.annotation, self.min, self.max)
            raise BadParameter(reason, ctx=ctx, param=param) from None


#: pydantic error types of a number that is not one, or out of the parameter's range.
_NUMBER_ERRORS = frozenset(
    {
        "int_parsing",
        "int_type",
        "int_from_float",
        "float_parsing",
        "float_type",
        "finite_number",
        "greater_than_equal",
        "greater_than",
        "less_than_equal",
        "less_than",
    }
)


def plain_reason(
    error: Mapping[str, Any], value: Any, annotation: Any, low: Any = None, high: Any = None
) -> str:
    """The reason of a usage error for one pydantic error dict (``ValidationError.errors()``)
    of a parameter typed ``annotation`` (``int``, ``float``, optional or not) with the range
    ``low``..``high`` (None: unbounded), given ``value``: for a number, the allowed values in
    plain words and the value given (``must be a whole number from 0 to 1,000,000 (got
    '-1')``,
    ``must be a number (got 'x')``); anything else in this project's words
    (``core.errors.validation_message``: an enum's ``'bogus' is not one of 'a', 'b'``).
    Click puts ``Invalid value for '-n' / '--count':`` before it (fresh-user review: pydantic's
    "Input should be less than or equal to 500" reached users)."""
    from continuity.core.errors import validation_message

    if get_origin(annotation) in (Union, UnionType):  # ``int | None``: the number
        annotation = next((a for a in get_args(annotation) if a is not NoneType), annotation)
    if error.get("type") not in _NUMBER_ERRORS or annotation not in (int, float):
        return validation_message(error)
    what = "a whole number" if annotation is int else "a number"
    if low is not None and high is not None:
        what += f" from {low:,} to {high:,}"
    elif low is not None:
        what += f", {low:,} or more"
    elif high is not None:
        what += f", {high:,} or less"
    return f"must be {what} (got {value!r})"


def install(param: Any) -> None:
    """Give Typer parameter ``param`` a ``FastRuntimeParam`` (a no-op for a parameter or a
    Typer version without the runtime-parameter hook, or one already coerced)."""
    if (
        hasattr(type(param), "get_runtime_param")
        and hasattr(param, "type_descriptor")
        and getattr(param, "_runtime_param", _ASK) is None
    ):
        param._runtime_param = FastRuntimeParam(param)


def install_command(cmd: Any) -> None:
    """``install`` on every parameter of Click command ``cmd`` and on its help option, which
    Click makes on first use (a group's subcommands are not visited)."""
    for param in cmd.params:
        install(param)
    original = getattr(cmd, "get_help_option", None)
    if original is None or getattr(original, "_fast_coercion", False):
        return

    def get_help_option(ctx: Any) -> Any:
        option = original(ctx)
        if option is not None:
            install(option)
        return option

    # a marker on Typer's function, read back above (already patched)
    get_help_option._fast_coercion = True  # pyright: ignore[reportFunctionMemberAccess]
    cmd.get_help_option = get_help_option
