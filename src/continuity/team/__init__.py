"""Team sync (issue 41): each machine keeps its own workspace and pushes its shared projects'
redacted sessions to one PostgreSQL team store, reading the team's back.

``settings`` (the ``[team]`` section: the store's URL without password, TLS off loopback, the
shared projects, author and machine), ``identity`` (a project is its normalised git remote
plus the path inside the repository), ``local`` (``team join|share|unshare|status``),
``schema`` (the team store's tables, roles and row-level security), ``push`` (the rows that
leave, redacted), ``sync`` (watermarked, batched, idempotent push and the index pull),
``reads`` (``--team`` reads), ``follow`` (the rounds of continuous sync: floor, debounce,
backoff), ``state`` (the last sync and the last error, for ``team status``), ``forget``
(``continuity forget``), ``pull`` (a teammate's session read back: ``show``/``continue``/
``brief --team``, ``resume`` of a session only the team store holds).

May import: every layer below it (``core`` to ``browse``).

The names below are re-exported lazily (``continuity.core.exports``): importing the package
loads none of its modules.
"""

from continuity.core.exports import lazy_exports

_EXPORTS = {
    "TeamSettings": "settings",
    "check_team_url": "settings",
    "team_settings": "settings",
    "ProjectIdentity": "identity",
    "normalise_remote": "identity",
    "project_identity": "identity",
    "join": "local",
    "set_shared": "local",
    "status": "local",
    "init_team_store": "schema",
    "add_member": "schema",
    "TeamStore": "remote",
    "SyncReport": "sync",
    "sync": "sync",
    "team_search": "reads",
    "team_sessions": "reads",
}

# The names as a type checker sees them; at run time ``__getattr__`` loads each on first
# use (tests/core/test_exports.py checks the two lists agree).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from continuity.team.identity import (
        ProjectIdentity,
        normalise_remote,
        project_identity,
    )
    from continuity.team.local import (
        join,
        set_shared,
        status,
    )
    from continuity.team.reads import (
        team_search,
        team_sessions,
    )
    from continuity.team.remote import (
        TeamStore,
    )
    from continuity.team.schema import (
        add_member,
        init_team_store,
    )
    from continuity.team.settings import (
        TeamSettings,
        check_team_url,
        team_settings,
    )
    from continuity.team.sync import (
        SyncReport,
        sync,
    )

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
