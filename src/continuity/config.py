"""Where continuity keeps its data, and the settings that say so.

The workspace ("home") is a folder holding ``continuity.db`` (SQLite) and, later, the markdown
lineage. It is, in order: the ``--home`` option, ``$CONTINUITY_HOME``, or the platform's user data
folder (``platformdirs.user_data_dir("continuity")``, e.g. ``~/.local/share/continuity``).
The database is ``$CONTINUITY_DATABASE_URL`` when set (e.g. ``postgresql+psycopg://...``), else
SQLite in the home folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic_settings import BaseSettings, SettingsConfigDict

#: seed 002: a follow-up reads at most 240,000 bytes (about 60,000 tokens at 4 bytes a token).
FOLLOW_UP_BUDGET_BYTES = 240_000


class Settings(BaseSettings):
    """Settings from the environment (prefix ``CONTINUITY_``): ``home``, ``database_url``."""

    model_config = SettingsConfigDict(env_prefix="CONTINUITY_", extra="ignore")

    home: Path | None = None
    database_url: str | None = None


def resolve_home(home: str | os.PathLike[str] | None = None) -> Path:
    """The workspace folder (see the module docstring); not created here."""
    if home:
        return Path(home).expanduser()
    settings = Settings()
    if settings.home:
        return settings.home.expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("continuity", appauthor=False))


def database_url(home: str | os.PathLike[str] | None = None) -> str:
    """The SQLAlchemy URL of the store: ``$CONTINUITY_DATABASE_URL`` or SQLite in the home."""
    url = Settings().database_url
    if url:
        return url
    return f"sqlite:///{resolve_home(home) / 'continuity.db'}"
