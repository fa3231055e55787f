"""Where continuity keeps its data, and the settings that say so.

The workspace ("home") is a folder holding ``continuity.db`` (SQLite), ``config.toml``, the
canonical transcripts and markdown lineage under ``memory/``, ``MEMORY.md`` and the hook spool.
It is, in order: the ``--home`` option, ``$CONTINUITY_HOME`` (empty counts as unset), or the
platform's user data folder (``platformdirs.user_data_dir("continuity")``, e.g.
``~/.local/share/continuity``). The database is ``$CONTINUITY_DATABASE_URL`` when set (it must be
a URL, e.g. ``postgresql+psycopg://...``; anything else is a ``ConfigError``), else SQLite in the
home folder. ``load_section`` reads one ``[section]`` of ``config.toml`` with environment
overrides; each feature owns its section's pydantic model.
"""

from __future__ import annotations

import os

from continuity.core import paths
from continuity.core.errors import ConfigError, InputError, validation_message

TYPE_CHECKING = False
if TYPE_CHECKING:  # pydantic costs ~50 ms to import; only ``load_section`` needs it; no
    # ``typing`` or ``pathlib`` at start-up either (issue 43 goal 3): the read commands ask
    # ``home_folder`` (text), ``T`` is for the type checker only
    from pathlib import Path
    from typing import TypeVar

    from pydantic import BaseModel

    T = TypeVar("T", bound="BaseModel")

#: seed 002: a follow-up reads at most 240,000 bytes (about 60,000 tokens at 4 bytes a token).
FOLLOW_UP_BUDGET_BYTES = 240_000
#: ``[continuity] follow_up_budget_bytes`` (issue 14): the follow-up budget in UTF-8 bytes, the
#: working view above which a settled turn gets its continuation checkpoint (in pi: the
#: extension's trigger; elsewhere: the daemon's policy). Its allowed range, inclusive: below
#: 1,000 bytes not even a summary fits; above 100,000,000 no model's window does.
FOLLOW_UP_BUDGET_RANGE = (1_000, 100_000_000)


def resolve_home(home: str | os.PathLike[str] | None = None) -> Path:
    """The workspace folder (see the module docstring); not created here. Raises
    ``ConfigError`` for an empty ``home`` and for a workspace path that is a regular file,
    naming where it came from (``--home``, ``$CONTINUITY_HOME``): a file is never used as a
    workspace (fresh-user review: ``where --home FILE`` printed it)."""
    from pathlib import Path

    return Path(home_folder(home))


def home_folder(home: str | os.PathLike[str] | None = None) -> str:
    """``str(resolve_home(home))``, with the same checks and errors, without ``pathlib`` for
    an absolute workspace path (``core.paths``: the read commands' start, issue 43 goal 3)."""
    if home is not None and str(home) == "":
        raise ConfigError("--home is empty: give a workspace folder")
    if home:
        return _folder(os.fspath(home), "--home")
    env = os.environ.get("CONTINUITY_HOME")
    if env:  # an empty CONTINUITY_HOME counts as unset
        return _folder(env, "$CONTINUITY_HOME")
    from platformdirs import user_data_dir

    return _folder(
        user_data_dir("continuity", appauthor=False), "the default workspace", expand=False
    )


def existing_home(home: str | os.PathLike[str] | None = None) -> str:
    """``home_folder(home)`` for a command that only reads (``sessions``, ``show``,
    ``search``...): a workspace named by ``--home`` or ``$CONTINUITY_HOME`` must be a folder
    that exists (fresh-user review: ``sessions --home /typo`` made an empty workspace there
    and listed nothing, as if the sessions were gone). Raises ``InputError`` (exit 2) naming
    the folder, where it was named, and the two fixes; ``ConfigError`` as ``home_folder``.
    Not checked: the default workspace (a new user's first ``sessions`` says to import
    something; the folder is made as by any command) and a workspace whose database is
    ``$CONTINUITY_DATABASE_URL`` (the folder holds no database to miss)."""
    folder = home_folder(home)
    if os.environ.get("CONTINUITY_DATABASE_URL") or paths.exists(folder):
        return folder
    if home:
        source = "--home"
    elif os.environ.get("CONTINUITY_HOME"):
        source = "$CONTINUITY_HOME"
    else:
        return folder
    raise InputError(
        f"no workspace at {folder}: {source} names a folder that does not exist (nothing has "
        f"been imported there); check {source}, or import into it: `continuity import PATH...`"
    )


def _folder(text: str, source: str, *, expand: bool = True) -> str:
    """``text`` (``~`` expanded when ``expand``) made absolute (issue 20: a relative
    ``CONTINUITY_HOME`` or ``--home`` is printed, stored and baked into hooks as the folder
    it means now, never relative to wherever a later process starts), as pathlib writes it,
    unless it is a regular file (``ConfigError`` naming ``source`` and the path)."""
    path = paths.absolute(text, expand=expand)
    if paths.is_file(path):
        raise ConfigError(f"{source} {path}: is a file, not a folder; give a workspace folder")
    return path


def database_url(home: str | os.PathLike[str] | None = None) -> str:
    """The SQLAlchemy URL of the store: ``$CONTINUITY_DATABASE_URL`` or SQLite in the home."""
    url = os.environ.get("CONTINUITY_DATABASE_URL")
    if url:
        if "://" not in url:
            raise ConfigError(
                f"CONTINUITY_DATABASE_URL={url!r} is not a database URL (use "
                "sqlite:///PATH or postgresql+psycopg://USER@HOST/DB)"
            )
        return url
    return f"sqlite:///{paths.joined(home_folder(home), 'continuity.db')}"


# ---------------------------------------------------------------------------- config.toml sections

CONFIG_FILE = "config.toml"

#: every ``[section]`` of ``config.toml`` a feature reads with ``load_section`` (checkpoints,
#: daemon, MEMORY.md, summarizer, transcripts). A section or ``CONTINUITY_<SECTION>__<FIELD>``
#: override naming another is an error (issue 16: ``[continuty]`` was ignored silently and
#: ``prune`` then used the default retention). tests/core/test_config.py checks that every
#: ``load_section`` call names one of these.
KNOWN_SECTIONS = (
    "archive",
    "continuity",
    "daemon",
    "memory_md",
    "retrieval",
    "summarizer",
    "team",
    "transcripts",
)


def _closest(name: str, known: tuple[str, ...] = KNOWN_SECTIONS) -> str:
    """`` (did you mean [x]?)`` for the known section closest to ``name`` (difflib), else the
    list of known sections."""
    import difflib

    match = difflib.get_close_matches(name.lower().replace("-", "_"), known, n=1, cutoff=0.5)
    if match:
        return f"did you mean [{match[0]}]?"
    return "known sections: " + ", ".join(f"[{k}]" for k in known)


def check_sections(data: dict[str, object], path: str | os.PathLike[str]) -> None:
    """Raise ``ConfigError`` naming ``path``, the unknown section and the closest known one
    for each top-level table of ``config.toml`` (``data``) that no feature reads, and for each
    ``CONTINUITY_<SECTION>__<FIELD>`` environment variable whose section is unknown
    (``CONTINUITY_CONTINUTY__RETENTION_DAYS``: did you mean ``CONTINUITY_CONTINUITY__…``?)."""
    problems = section_problems(data, path) + env_problems()
    if problems:
        raise ConfigError("; ".join(problems))


def section_problems(data: dict[str, object], path: str | os.PathLike[str]) -> list[str]:
    """``check_sections``' words for each top-level table of ``data`` no feature reads."""
    return [
        f"{path}: unknown section [{name}]; {_closest(name)}"
        for name in data
        if name not in KNOWN_SECTIONS
    ]


def env_problems() -> list[str]:
    """``check_sections``' words for each ``CONTINUITY_<SECTION>__<FIELD>`` variable of this
    process whose section is unknown."""
    problems = []
    for var in sorted(os.environ):
        if not var.startswith("CONTINUITY_") or "__" not in var[11:]:
            continue
        section, field = var[11:].split("__", 1)
        if section.lower() not in KNOWN_SECTIONS:
            hint = _closest(section)
            if hint.startswith("did you mean"):
                best = hint[len("did you mean [") : -2]
                hint = f"did you mean ${'CONTINUITY_' + best.upper() + '__' + field}?"
            problems.append(f"${var}: unknown section {section.lower()!r}; {hint}")
    return problems


def config_path(home: str | os.PathLike[str] | None = None) -> Path:
    """``<home>/config.toml``, the workspace's configuration file."""
    return resolve_home(home) / CONFIG_FILE


def read_config(home: str | os.PathLike[str] | None = None) -> dict[str, object]:
    """The tables of ``<home>/config.toml`` (``{}`` when there is none), its section names
    and the ``CONTINUITY_<SECTION>__<FIELD>`` override names checked (``check_sections``).
    Only ``tomllib``: every CLI command calls it at start (``check_config``) without importing
    any feature's settings model. Raises ``ConfigError`` naming the file for a path that is not
    a file, bytes that are not UTF-8 (with the byte offset), invalid TOML, an unknown section
    or override (issue 16, fresh-user review: ``sessions`` ignored ``[continuty]``)."""
    path = config_text_path(home)
    if path is None:
        check_sections({}, "")
        return {}
    data = load_config_file(path)
    check_sections(data, path)
    return data


def config_text_path(home: str | os.PathLike[str] | None = None) -> str | None:
    """``<home>/config.toml`` as text (``config_path``'s) when it is a file, None when there
    is none; raises ``ConfigError`` when the path is something else (a folder)."""
    path = paths.joined(home_folder(home), CONFIG_FILE)
    if paths.exists(path) and not paths.is_file(path):
        raise ConfigError(f"{path}: is not a file")
    return path if paths.is_file(path) else None


def load_config_file(path: str) -> dict[str, object]:
    """The tables of the ``config.toml`` at ``path``, not yet checked (``read_config`` checks
    them). Raises ``ConfigError`` naming ``path`` for bytes that are not UTF-8 (with the byte
    offset), invalid TOML or a file that cannot be read."""
    import tomllib  # only now: most workspaces have no config.toml, and tomllib costs ~10 ms

    try:
        with open(path, "rb") as fh:
            raw = fh.read()
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 (byte {exc.start})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror or exc}") from exc
    return data


#: ``config_verdict``'s answers by path, with the file's stat when it was read
_verdicts: dict[str, tuple[tuple[int, ...], dict[str, object]]] = {}


def config_verdict(path: str) -> dict[str, object]:
    """What ``read_config`` finds in the ``config.toml`` at ``path``, the environment aside,
    for a client that does not read it itself (issue 43 goal 3: ``tomllib`` is 10 ms of the
    search client's start; the daemon has it loaded): ``{"error": TEXT}`` for a file it
    refuses whole, else ``{"problems": [TEXT, ...]}`` (``section_problems``, maybe none).
    Kept per path while the file's inode, size, modification and change times (ns) stay."""
    try:
        st = os.stat(path)
        stamp: tuple[int, ...] = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    except OSError:
        stamp = ()
    kept = _verdicts.get(path)
    if stamp and kept is not None and kept[0] == stamp:
        return kept[1]
    verdict: dict[str, object]
    try:
        verdict = {"problems": section_problems(load_config_file(path), path)}
    except ConfigError as exc:
        verdict = {"error": str(exc)}
    if stamp:
        _verdicts[path] = (stamp, verdict)
    return verdict


def check_verdict(verdict: dict[str, object]) -> None:
    """Raise ``ConfigError`` as ``read_config`` would for the file ``config_verdict`` judged
    and this process's environment (``env_problems``)."""
    error = verdict.get("error")
    if isinstance(error, str):
        raise ConfigError(error)
    found = verdict.get("problems")
    problems = [p for p in found if isinstance(p, str)] if isinstance(found, list) else []
    problems += env_problems()
    if problems:
        raise ConfigError("; ".join(problems))


def check_config(home: str | os.PathLike[str] | None = None) -> None:
    """Raise ``ConfigError`` when ``config.toml`` or an env override is unusable as a whole
    (``read_config``); the values of a section are checked by the feature that reads it
    (``load_section``) and by ``continuity doctor`` (every section)."""
    read_config(home)


def load_section(section: str, model: type[T], home: str | os.PathLike[str] | None = None) -> T:
    """Settings of one ``[section]`` of ``config.toml``, then environment variables.

    ``model`` is a pydantic ``BaseModel``; a field ``prompt_interval`` of section ``continuity``
    is read from ``[continuity] prompt_interval`` (or its alias, e.g. ``promptInterval``) and
    overridden by ``CONTINUITY_CONTINUITY__PROMPT_INTERVAL``. Raises ``ConfigError`` naming the
    file, the field and the rule for a bad value (never clamps silently), for invalid TOML, and
    for a section or env override no feature reads, with the closest known one
    (``check_sections``, issue 16).
    """
    from pydantic import ValidationError

    path = config_path(home)
    values: dict[str, object] = {}
    data = read_config(home)
    section_values = data.get(section, {})
    if not isinstance(section_values, dict):
        raise ConfigError(f"{path}: [{section}] must be a table")
    values.update(section_values)
    for name, info in model.model_fields.items():
        if info.alias and info.alias != name and name in values and info.alias in values:
            raise ConfigError(
                f"{path} [{section}]: {name} and {info.alias} are the same "
                "setting, given twice: keep one"
            )
    prefix = f"CONTINUITY_{section.upper()}__"
    from_env: dict[str, str] = {}
    for name, info in model.model_fields.items():
        for var in dict.fromkeys(prefix + n.upper() for n in (name, info.alias) if n):
            env = os.environ.get(var)
            if env is not None:
                for key in (name, info.alias):
                    if key:
                        values.pop(key, None)
                values[info.alias or name] = env
                from_env[info.alias or name] = var
                from_env[name] = var
    fields = [(name, info.alias) for name, info in model.model_fields.items()]
    unknown = [
        f"${var}: {var[len(prefix) :].lower()!r} is not a setting of [{section}]"
        f"{_setting_hint(var[len(prefix) :], fields, env=prefix)}"
        for var in sorted(os.environ)
        if var.startswith(prefix) and var not in from_env.values()
    ]
    if unknown:  # review: an override naming no setting was ignored without a word
        raise ConfigError("; ".join(unknown))
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            field = ".".join(str(p) for p in err["loc"])
            where = f"${from_env[field]}" if field in from_env else f"{path} [{section}] {field}"
            hint = _setting_hint(field, fields) if err.get("type") == "extra_forbidden" else ""
            problems.append(f"{where}: {validation_message(err)} (got {err.get('input')!r}){hint}")
        raise ConfigError("; ".join(problems)) from None


def _setting_hint(name: str, fields: list[tuple[str, str | None]], *, env: str = "") -> str:
    """``; did you mean X?`` for the setting of ``fields`` (``(name, alias)``) closest to
    ``name`` (difflib; case and ``_`` ignored), as the environment variable ``env`` + NAME
    when ``env`` is given, else spelled as ``name`` was (camelCase or snake_case); with no
    close one, ``; known settings: …``."""
    import difflib

    by_norm = {field.lower().replace("_", ""): (field, alias) for field, alias in fields}
    match = difflib.get_close_matches(name.lower().replace("_", ""), list(by_norm), n=1, cutoff=0.6)
    if match:
        field, alias = by_norm[match[0]]
        if env:
            return f"; did you mean ${env}{field.upper()}?"
        return f"; did you mean {alias if alias and name != name.lower() else field}?"
    if env:
        return "; known: " + ", ".join(f"${env}{f.upper()}" for f, _ in fields)
    return "; known settings: " + ", ".join(f"{f} ({a})" if a and a != f else f for f, a in fields)
