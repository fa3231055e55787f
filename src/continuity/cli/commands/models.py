"""CLI commands for local embedding models (issue 40): ``continuity models list`` and
``continuity models fetch NAME``.

The packaged model (``wordllama-l2-supercat``, in the ``semantic`` extra) needs nothing; the
others are downloaded once, with the user's consent (a prompt naming the size and the source;
``--yes`` answers it, and so does a ``y`` piped on stdin), with a progress bar on stderr, into the models folder
(``retrieval.embedder.models_dir``). Nothing is downloaded at query time.
"""

from __future__ import annotations

import typer

from continuity.cli.commands.common import JsonOption, bad_option, emit_json, err, out
from continuity.core.errors import InputError

models_app = typer.Typer(help="Local embedding models for search by meaning.", no_args_is_help=True)

#: Where models are fetched from unless ``--from`` says otherwise.
SOURCE = "https://huggingface.co"


@models_app.command("list")
def models_list(as_json: bool = JsonOption) -> None:
    """List the embedding models: name, dimensions, size, and whether it is on this machine."""
    from continuity.core.errors import ConfigError
    from continuity.retrieval.embedder import MODELS, model_files

    rows = []
    for spec in MODELS.values():
        try:
            model_files(spec)
            here = True
        except ConfigError:
            here = False
        rows.append(
            {
                "name": spec.name,
                "dim": spec.dim,
                "size_mb": spec.size_mb,
                "packaged": spec.package is not None,
                "on_this_machine": here,
            }
        )
    if as_json:
        emit_json({"models": rows})
        return
    for r in rows:
        where = (
            "packaged" if r["packaged"] else ("fetched" if r["on_this_machine"] else "not fetched")
        )
        out.print(
            f"{r['name']}  {r['dim']} dims  ~{r['size_mb']} MB  {where}",
            markup=False,
            highlight=False,
        )


@models_app.command("fetch")
def models_fetch(
    name: str = typer.Argument(..., help="The model to download (see `continuity models list`)."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Download without asking."),
    source: str | None = typer.Option(
        None, "--from", metavar="URL", help=f"Where to download from (default {SOURCE})."
    ),
    as_json: bool = JsonOption,
) -> None:
    """Download embedding model NAME once, after asking (its size and source are shown), with
    a progress bar; then set `[retrieval] model = "NAME"` to use it. Search never downloads."""
    from continuity.retrieval.embedder import MODELS, fetch_model, models_dir

    spec = MODELS.get(name)
    if spec is None or spec.repo is None:
        fetchable = ", ".join(sorted(k for k, v in MODELS.items() if v.repo))
        raise bad_option(
            "NAME",
            f"model {name!r} is not a model to fetch (packaged or unknown); fetchable: {fetchable}",
        )
    base = source or SOURCE
    if not yes and not _consent(
        f"Download {name} (about {spec.size_mb} MB) from {base}/"
        f"{spec.repo} into {models_dir() / name}?",
        f"fetching {name} downloads about {spec.size_mb} MB from "
        f"{base}; answer y on stdin (echo y | continuity models fetch "
        f"{name}) or pass --yes",
    ):
        err.print("nothing downloaded", markup=False)
        raise typer.Exit(1)
    with _bar(f"fetching {name}", enabled=not as_json) as progress:
        folder = fetch_model(name, progress=progress, base_url=base)
    if as_json:
        emit_json({"name": name, "path": str(folder)})
        return
    out.print(str(folder), markup=False, highlight=False)
    err.print(
        f'fetched {name}; use it with [retrieval] model = "{name}" in config.toml', markup=False
    )


def _consent(question: str, no_answer: str) -> bool:
    """The user's yes to ``question``: in a terminal, the prompt; with stdin piped (not a
    TTY), the question on stderr and one line read from stdin, ``y`` or ``yes`` (any case)
    meaning yes, as users expect of ``echo y | ...`` (issue 40 leftover, issue 45: only
    ``--yes`` was taken). No line at all (stdin empty or closed) is an ``InputError``
    saying ``no_answer``."""
    import sys

    stdin = sys.stdin
    if stdin is not None and stdin.isatty():
        return typer.confirm(question, err=True)
    err.print(f"{question} [y/N]: ", markup=False, end="")
    line = stdin.readline() if stdin is not None else ""
    if not line:
        err.print("", markup=False)
        raise InputError(no_answer)
    return line.strip().lower() in ("y", "yes")


class _bar:
    """A Rich download bar on stderr (bytes, speed, ETA), or a no-op without a TTY; the
    object is the ``progress(done, total)`` callable ``fetch_model`` takes."""

    def __init__(self, label: str, *, enabled: bool) -> None:
        self.label, self.enabled = label, enabled and err.is_terminal
        self._bar = None
        self._task = None

    def __enter__(self) -> _bar:
        if self.enabled:
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
                TransferSpeedColumn,
            )

            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                DownloadColumn(),
                TransferSpeedColumn(),
                TimeRemainingColumn(),
                console=err,
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=None)
        return self

    def __call__(self, done: int, total: int) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=done, total=total or None)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


def register(app: typer.Typer) -> None:
    """Add the ``models`` group (``list``, ``fetch``) to the app."""
    app.add_typer(models_app, name="models")
