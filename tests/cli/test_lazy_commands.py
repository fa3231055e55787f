"""Issue 17: a read command starts without the other commands' modules, pydantic or the
summarizer's settings (``continuity.cli.commands.LazyGroup``, ``continuity.cli.coerce``)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import typer

from continuity.cli.commands import COMMANDS, GROUPS, MODULES, register_all
from tests.paths import SHARED_DATA

PI_SAMPLE = SHARED_DATA / "pi" / "v3-short-session.jsonl"

#: Modules a read command (``sessions``, ``show``, ``continue``) must not import; on a SQLite
#: workspace that includes PostgreSQL's dialect (``store.schema.upsert_insert`` loads it on
#: first use: 30-55 ms of every start).
NOT_FOR_READS = [
    "pydantic",
    "typer._adapters",
    "continuity.continuation.summarize.settings",
    "sqlalchemy.dialects.postgresql",
    *(f"continuity.cli.commands.{m}" for m in MODULES),
]


def _names(app: typer.Typer) -> list[str]:
    return list(typer.main.get_group(app).commands)


def test_the_command_table_names_what_the_modules_register_in_order():
    eager = typer.Typer()
    register_all(eager)
    assert _names(eager) == [*COMMANDS, *GROUPS]
    for module in MODULES:
        one = typer.Typer()
        __import__(f"continuity.cli.commands.{module}", fromlist=["register"]).register(one)
        assert dict.fromkeys(_names(one), module) == {
            n: m for n, m in {**COMMANDS, **GROUPS}.items() if m == module
        }


def test_help_order_is_the_eager_order():
    from continuity.cli.app import command

    root = command()
    assert root.list_commands(None) == [
        "import",
        "sessions",
        "show",
        "continue",
        "where",
        *COMMANDS,
        "db",
        *GROUPS,
    ]
    assert set(root.commands.loaded()) == {"db"}  # listing converts and loads nothing
    assert root.commands["sessions"].params[0].name == "version"
    assert root.commands["compact"].params[0].name == "version"  # loaded: prepared as the rest


@pytest.fixture(scope="module")
def pi_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("lazy")
    exe = str(__import__("pathlib").Path(sys.executable).with_name("continuity"))
    subprocess.run(
        [exe, "import", str(PI_SAMPLE), "--home", str(home)], check=True, capture_output=True
    )
    listed = subprocess.run(
        [exe, "sessions", "--json", "--home", str(home)], check=True, capture_output=True, text=True
    )
    return home, json.loads(listed.stdout)[0]["session"]


def _loaded_by(*argv: str) -> tuple[int, list[str]]:
    code = (
        "import json, sys\n"
        f"sys.argv = ['continuity', *{list(argv)!r}]\n"
        "from continuity.cli.hookcmd import console\n"
        "try:\n    console()\nexcept SystemExit as exc:\n    status = exc.code or 0\n"
        "else:\n    status = 0\n"
        "sys.stderr.write(json.dumps([status, sorted(sys.modules)]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    status, modules = json.loads(done.stderr.strip().splitlines()[-1])
    return status, modules


@pytest.mark.parametrize(
    "argv",
    [
        ["sessions", "-n", "1"],
        ["show", "KEY"],
        ["show", "KEY", "--raw"],
        ["continue", "KEY"],
        ["--help"],
    ],
    ids=lambda a: " ".join(a),
)
def test_a_read_command_imports_no_other_command_nor_pydantic(pi_home, argv):
    home, key = pi_home
    status, modules = _loaded_by("--home", str(home), *(key if a == "KEY" else a for a in argv))
    assert status == 0
    if argv == ["--help"]:  # the listing needs every command's help text
        assert {f"continuity.cli.commands.{m}" for m in MODULES} <= set(modules)
        return
    assert [m for m in NOT_FOR_READS if m in modules] == []
    assert "continuity.formats.importer" not in modules
    # the continuation and show (unless --raw) redact; sessions redacts a title only when it
    # computes one (issue 44), and the fixture's first listing kept them all (revision 0025),
    # so this listing loads no redaction (issue 43 goal 3)
    redacts = argv[0] == "continue" or (argv[0] == "show" and "--raw" not in argv)
    assert ("continuity.redaction.funnel" in modules) == redacts


def test_importing_the_app_loads_no_command_module():
    code = (
        "import sys; import continuity.cli.app; "
        "print(sorted(m for m in sys.modules if m.startswith(('pydantic', "
        "'continuity.cli.commands.', 'continuity.continuation.summarize')) "
        "and m != 'continuity.cli.commands.common'))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
