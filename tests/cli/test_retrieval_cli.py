"""Issue 40 on the command line: ``search --mode``, ``recall`` by meaning, ``import`` embeds
(``--no-embed``), ``doctor``'s embeddings check, ``models fetch`` over real HTTP."""

from __future__ import annotations

import json
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from continuity.cli.app import app
from continuity.core.config import database_url
from continuity.core.errors import ContinuityError
from continuity.retrieval.embedder import MODELS
from continuity.store import open_store
from tests.builders import A, U, load

runner = CliRunner()
PARAPHRASE = "where did we fix the scroll-back bug?"
ROW = (
    "The xterm.js viewport scrollTop reset to 0 on every write; now it keeps the user's "
    "position unless they were at the bottom"
)


def invoke(*args: object, **kw):
    result = runner.invoke(app, [str(a) for a in args], **kw)
    if result.exception and not isinstance(result.exception, (SystemExit, ContinuityError)):
        raise result.exception
    return result


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    with open_store(database_url(path)) as store:
        load(
            store,
            [
                U("the terminal pane flickers on resize"),
                A(text=ROW),
                U("npm install failed with EACCES"),
            ],
            key="term",
        )
    return path


def _embed(home: Path) -> None:
    from continuity.retrieval.embedder import load_embedder
    from continuity.retrieval.embedding import embed_pending
    from continuity.retrieval.settings import RetrievalSettings

    with open_store(database_url(home)) as store:
        embed_pending(store, load_embedder(RetrievalSettings()))


def test_search_mode_hybrid_finds_a_paraphrase_words_does_not(home):
    """``--mode words`` finds nothing for the paraphrase; the default (hybrid) and
    ``--mode vectors`` rank the row first, its snippet from the row's start."""
    _embed(home)
    words = invoke("search", PARAPHRASE, "--mode", "words", "--json", "--home", home)
    assert words.exit_code == 1 and words.stdout == ""  # no hit: exit 1 (issue 45 item 8)
    for mode in ([], ["--mode", "vectors"]):
        got = invoke("search", PARAPHRASE, *mode, "--json", "--home", home)
        hits = [json.loads(line) for line in got.stdout.splitlines()]
        assert (hits[0]["session"], hits[0]["seq"]) == ("term", 1)
        assert hits[0]["snippet"].startswith("The xterm.js viewport")
    bad = invoke("search", "x", "--mode", "fuzzy", "--home", home)
    assert bad.exit_code == 2 and "'--mode'" in bad.output
    assert "vectors: by meaning" in invoke("search", "--help").stdout


def test_import_embeds_after_ingest_and_no_embed_skips(tmp_path, shared_data):
    """``import`` embeds what it imported (the JSON says how many); ``--no-embed`` leaves the
    rows waiting, and doctor's check counts them."""
    from continuity.cli.commands.doctor import check_embeddings

    files = sorted(shared_data.rglob("*.jsonl"))[:1]
    assert files
    ws = tmp_path / "ws"
    skipped = invoke("import", *files, "--no-embed", "--json", "--home", ws)
    assert skipped.exit_code == 0, skipped.output
    assert json.loads(skipped.stdout)["embedded"] is None
    waiting = check_embeddings(ws, daemon_up=False)
    assert waiting.status == "warning" and waiting.data["waiting"] > 0
    assert check_embeddings(ws, daemon_up=True).status == "info"
    ws2 = tmp_path / "ws2"
    done = invoke("import", *files, "--json", "--home", ws2)
    report = json.loads(done.stdout)["embedded"]
    # issue 45 (issue 40 leftover): rows without text are never embedded, so doctor counts
    # only the rows the pass embeds, not those it skips
    assert report["skipped"] > 0
    assert report["left"] == 0 and report["embedded"] == waiting.data["waiting"]
    assert waiting.data["exact"] is True
    ok = check_embeddings(ws2, daemon_up=False)
    assert (ok.status, ok.data["waiting"]) == ("ok", 0)


def test_doctor_embeddings_words_only_without_the_extra(home, monkeypatch):
    from continuity.cli.commands.doctor import check_embeddings
    from continuity.retrieval import embedder

    monkeypatch.setattr(embedder, "semantic_available", lambda: False)
    check = check_embeddings(home, daemon_up=False)
    assert check.status == "ok" and "words only" in check.detail


def test_recall_ranks_a_paraphrased_memory_first(home):
    invoke("remember", "we keep the xterm viewport scrollTop unless at the bottom", "--home", home)
    invoke("remember", "postgres GIN index for the tsvector column", "--home", home)
    _embed(home)
    got = invoke("recall", "terminal scroll position", "--json", "--home", home)
    results = json.loads(got.stdout)["results"]
    assert results and "scrollTop" in results[0]["content"]


@pytest.fixture
def model_server(tmp_path):
    """A local HTTP server (127.0.0.1) laid out as the Hugging Face repository of
    ``potion-base-8m``, serving the packaged wordllama model's weights (its tensor saved
    under the name the spec reads) and tokenizer."""
    from importlib.util import find_spec

    from safetensors import safe_open
    from safetensors.numpy import save_file

    spec = MODELS["potion-base-8m"]
    src = Path(next(iter(find_spec("wordllama").submodule_search_locations)))
    packaged = MODELS["wordllama-l2-supercat"]
    root = tmp_path / "srv"
    repo = root / spec.repo / "resolve" / "main"
    repo.mkdir(parents=True)
    with safe_open(str(src / packaged.weights), framework="np") as f:
        table = f.get_tensor(packaged.tensor)
    save_file({spec.tensor: table}, str(repo / spec.weights))
    (repo / spec.tokenizer).write_bytes((src / packaged.tokenizer).read_bytes())
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), partial(SimpleHTTPRequestHandler, directory=str(root))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_models_fetch_downloads_with_consent_and_loads(model_server, tmp_path, monkeypatch):
    """Without a TTY, without --yes and with nothing on stdin nothing is fetched; a "no"
    piped on stdin fetches nothing; a "y" piped on stdin (issue 45: only --yes was taken)
    downloads both files over HTTP into the models folder, and the model then loads and
    embeds offline."""
    from continuity.retrieval.embedder import load_embedder
    from continuity.retrieval.settings import RetrievalSettings

    monkeypatch.setenv("CONTINUITY_MODELS_DIR", str(tmp_path / "models"))
    refused = invoke("models", "fetch", "potion-base-8m", "--from", model_server)
    assert refused.exit_code != 0 and "--yes" in str(refused.exception)
    assert "echo y |" in str(refused.exception)
    declined = invoke("models", "fetch", "potion-base-8m", "--from", model_server, input="n\n")
    assert declined.exit_code == 1 and not (tmp_path / "models" / "potion-base-8m").exists()
    got = invoke("models", "fetch", "potion-base-8m", "--from", model_server, input="y\n")
    assert got.exit_code == 0, got.output
    folder = tmp_path / "models" / "potion-base-8m"
    assert (folder / "model.safetensors").stat().st_size > 1_000_000
    assert not list(folder.glob("*.part"))
    found = load_embedder(RetrievalSettings(model="potion-base-8m"))
    vec = found.encode(["terminal scroll position"])
    assert found.model_id == "potion-base-8m/256" and vec.shape == (1, 256)
    again = invoke("models", "fetch", "potion-base-8m", "--yes", "--from", "http://127.0.0.1:9")
    assert again.exit_code == 0  # whole files are not fetched again
    unknown = invoke("models", "fetch", "wordllama-l2-supercat", "--yes")
    assert unknown.exit_code == 2 and "not a model to fetch" in unknown.output


def test_models_fetch_keeps_nothing_that_is_not_the_model(tmp_path, monkeypatch):
    """A server answering with an HTML page for both files (a proxy, a wrong mirror: the
    fresh-user review's case): the fetch fails naming the model, leaves no file and no
    folder, and a search still works by words; an unreachable host says "no network?"."""
    from continuity.core.errors import ConfigError
    from continuity.retrieval.embedder import fetch_model

    page = tmp_path / "srv" / "minishlab" / "potion-base-8M" / "resolve" / "main"
    page.mkdir(parents=True)
    for name in ("model.safetensors", "tokenizer.json"):
        (page / name).write_text("<html>sign in</html>\n")
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), partial(SimpleHTTPRequestHandler, directory=str(tmp_path / "srv"))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("CONTINUITY_MODELS_DIR", str(tmp_path / "models"))
    try:
        with pytest.raises(ConfigError, match="do not load as a model"):
            fetch_model("potion-base-8m", base_url=f"http://127.0.0.1:{server.server_address[1]}")
    finally:
        server.shutdown()
        server.server_close()
    assert not (tmp_path / "models" / "potion-base-8m").exists()
    with pytest.raises(ConfigError, match="no network"):
        fetch_model("potion-base-8m", base_url="http://nonexistent.invalid")
    assert not (tmp_path / "models" / "potion-base-8m").exists()


def test_a_model_that_does_not_load_falls_back_to_words(home, tmp_path, monkeypatch):
    """Files on disk that are not the model (written by hand, or an older damaged fetch):
    search ranks by words and says why, instead of a traceback (fresh-user review)."""
    folder = tmp_path / "models" / "potion-base-8m"
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_text("<html></html>")
    (folder / "tokenizer.json").write_text("<html></html>")
    monkeypatch.setenv("CONTINUITY_MODELS_DIR", str(tmp_path / "models"))
    (home / "config.toml").write_text('[retrieval]\nmodel = "potion-base-8m"\n')
    got = invoke("search", "npm install", "--json", "--home", home)
    assert got.exit_code == 0, got.output
    assert [json.loads(line)["seq"] for line in got.stdout.splitlines()] == [2]
    assert "do not load as a model" in got.stderr and "by words" in got.stderr
    from continuity.cli.commands.doctor import check_embeddings

    check = check_embeddings(home, daemon_up=True)
    assert check.status == "problem" and "do not load as a model" in check.detail
    (home / "config.toml").write_text("[retrieval]\ndim = 300\n")
    check = check_embeddings(home, daemon_up=True)
    assert check.status == "problem" and "only 256 dimensions" in check.detail


def test_doctor_embeddings_fix_runs_as_printed(tmp_path, shared_data, monkeypatch):
    """Issue 45 item 3: the embeddings fix printed ``continuity import --home W``, which
    fails (its paths argument is required). It names the harness session folders that
    exist, and run as printed it embeds what waits."""
    import re
    import shlex
    import shutil

    from continuity.cli.commands.doctor import check_embeddings

    projects = tmp_path / "cc" / "projects" / "p"
    projects.mkdir(parents=True)
    shutil.copy(sorted(shared_data.rglob("*.jsonl"))[0], projects)
    for var, value in (
        ("CLAUDE_CONFIG_DIR", tmp_path / "cc"),
        ("CODEX_HOME", tmp_path / "n"),
        ("PI_CODING_AGENT_DIR", tmp_path / "n"),
        ("XDG_DATA_HOME", tmp_path / "n"),
    ):
        monkeypatch.setenv(var, str(value))
    ws = tmp_path / "ws"
    assert invoke("import", projects, "--no-embed", "--home", ws).exit_code == 0
    waiting = check_embeddings(ws, daemon_up=False)
    assert waiting.status == "warning"
    printed = [shlex.split(c) for c in re.findall(r"`(continuity import [^`]*)`", waiting.fix)]
    assert printed == [
        ["continuity", "import", str(tmp_path / "cc" / "projects"), "--home", str(ws)]
    ], waiting.fix
    done = invoke(*printed[0][1:])
    assert done.exit_code == 0, done.output
    assert check_embeddings(ws, daemon_up=False).status == "ok"


def test_recall_refuses_a_type_remember_would_refuse(home):
    """A fresh-user review: ``recall --type bogus`` ran and matched nothing while ``remember
    --type bogus`` was refused; the filter takes the same types, case folded as remember
    folds them."""
    invoke("remember", "the build runs with make", "--type", "decision", "--home", home)
    bad = invoke("recall", "build", "--type", "bogus", "--home", home)
    from continuity.core.errors import InputError

    assert isinstance(bad.exception, InputError) and InputError.exit_code == 2  # main's exit
    assert str(bad.exception) == (
        "type: must be one of 'fact', 'decision', 'constraint', 'preference', 'procedure', "
        "'note' or 'rule' (got 'bogus')"
    )
    good = invoke("recall", "build", "--type", " Decision ", "--json", "--home", home)
    assert good.exit_code == 0
    assert [r["type"] for r in json.loads(good.stdout)["results"]] == ["decision"]


def test_recall_echoes_a_blank_type_as_typed_and_names_its_filters_when_nothing_matches(home):
    """Fresh-user review: ``--type '   '`` was refused with ``(got '')``, and a ``--type`` or
    ``--tag`` that left nothing was not named in the no-match message."""
    invoke("remember", "the build runs with make", "--type", "decision", "--home", home)
    blank = invoke("recall", "build", "--type", "   ", "--home", home)
    assert str(blank.exception).endswith("(got '   ')")
    none = invoke("recall", "build", "--type", "Rule", "--tag", "ci", "--home", home)
    assert none.exit_code == 1 and none.stdout == ""
    assert none.stderr.strip() == "no memory matches 'build' of type 'Rule' tagged 'ci'"


def test_recall_refuses_the_tags_remember_refuses_and_says_why_nothing_matched_in_json(home):
    """Fresh-user review: ``recall --tag ''`` (or a 101-character tag) ran and matched nothing
    where ``remember`` refused it, ``remember --tag '  '`` said "1..100 characters" of a
    2-character tag, and ``recall --json`` with no match said nothing of its filters."""
    from continuity.core.errors import InputError

    invoke("remember", "the build runs with make", "--tag", "ops", "--home", home)
    for command in ("recall", "remember"):
        blank = invoke(command, "build", "--tag", "  ", "--home", home)
        assert isinstance(blank.exception, InputError)
        assert "a tag cannot be blank" in str(blank.exception)
        long = invoke(command, "build", "--tag", "t" * 101, "--home", home)
        assert isinstance(long.exception, InputError)
        assert "each tag must be at most 100 characters" in str(long.exception)
    spaced = invoke("recall", "build", "--tag", " OPS ", "--json", "--home", home)
    assert spaced.exit_code == 0
    assert [r["tags"] for r in json.loads(spaced.stdout)["results"]] == [["ops"]]
    none = invoke("recall", "build", "--type", "rule", "--json", "--home", home)
    assert none.exit_code == 1
    assert json.loads(none.stdout)["results"] == []
    assert none.stderr.strip() == "no memory matches 'build' of type 'rule'"
