"""The embedding pass (issue 40): redacted text only, bounded batches, resumable."""

from __future__ import annotations

import numpy as np
import pytest

from continuity.retrieval.embedding import embed_pending, embed_text
from continuity.transcripts.memories import remember
from tests.builders import A, U, load
from tests.retrieval.conftest import Recording

SECRET = "sk-ant-api03-AAAABBBBCCCCDDDDEEEEFFFFGGGGHHHHIIIIJJJJ"


def _vectors(store, model):
    return [r for c in store.iter_entry_vectors(model) for r in c]


def test_embed_pending_embeds_only_redacted_text(store, recording):
    """A secret in a row (and repeated bare in the same row, defined later) never reaches
    the embedder; the row is embedded all the same."""
    load(
        store,
        [
            U(f"use {SECRET} for the api"),
            A(
                text="the token is sk-test then later PASSWORD=hunter2hunter2xyz and "
                "hunter2hunter2xyz again"
            ),
        ],
        key="s",
    )
    remember(store, f"deploy key is {SECRET}")
    report = embed_pending(store, recording, batch_rows=1)
    assert (report.embedded, report.skipped, report.left) == (3, 0, 0)
    seen = "\n".join(recording.texts)
    assert SECRET not in seen and "hunter2hunter2xyz" not in seen
    assert "[REDACTED:" in seen and "for the api" in seen
    assert recording.calls == 3  # one batch of one row each: bounded
    assert embed_text(store.entries("s")[0]).startswith("use [REDACTED:")


def test_embed_pending_skips_empty_rows_and_stores_int8_of_unit_vectors(store, recording):
    """A row with no text gets an empty vector (not read again); the others are stored as
    int8 with a scale (``retrieval.quantize``: 260 bytes at 256 dimensions, a quarter of
    float32) and read back as unit vectors within 1e-2 of the model's."""
    load(store, [U("the parser test is flaky"), A()], key="s")
    report = embed_pending(store, recording)
    assert (report.embedded, report.skipped, report.left) == (1, 1, 0)
    rows = _vectors(store, recording.model_id)
    assert [(k, s) for _, k, s, _ in rows] == [("s", 0)]
    from continuity.retrieval.quantize import decode

    assert len(rows[0][3]) == 256 + 4
    vec = decode([rows[0][3]], 256)[0]
    assert vec.shape == (256,) and abs(float(np.linalg.norm(vec)) - 1.0) < 1e-5
    model = recording.encode(["the parser test is flaky"])[0]
    assert float(vec @ model) > 0.9999  # the same direction, within the rounding
    assert embed_pending(store, recording) == type(report)(0, 0, 0)
    assert store.count_entries_to_embed(recording.model_id) == 0


def test_embed_pending_resumes_after_a_crash_without_loss_or_duplicates(store, embedder):
    """A pass killed in its third batch keeps the two batches written; the next pass embeds
    exactly the rest, and every row ends with one vector."""
    load(store, [U(f"row number {i} about topic {i % 7}") for i in range(10)], key="s")
    crashing = Recording(embedder, fail_after=2)
    with pytest.raises(KeyboardInterrupt):
        embed_pending(store, crashing, batch_rows=3)
    assert len(_vectors(store, embedder.model_id)) == 6
    again = Recording(embedder)
    report = embed_pending(store, again, batch_rows=3)
    assert (report.embedded, report.left) == (4, 0)
    assert len(again.texts) == 4  # the six stored rows are not embedded again
    rows = _vectors(store, embedder.model_id)
    assert sorted(s for _, _, s, _ in rows) == list(range(10))


def test_embed_pending_honours_limit_progress_and_stop(store, recording):
    """``limit`` bounds a call, ``progress`` counts rows, ``should_stop`` ends it between
    batches."""
    load(store, [U(f"text {i}") for i in range(5)], key="s")
    seen = []
    report = embed_pending(
        store, recording, batch_rows=2, limit=3, progress=lambda d, t: seen.append((d, t))
    )
    assert (report.embedded, report.left) == (3, 2) and seen == [(2, 3), (3, 3)]
    report = embed_pending(store, recording, should_stop=lambda: True)
    assert (report.embedded, report.left) == (0, 2)


def test_loading_the_model_leaves_the_process_logging_as_it_was():
    """wordllama's inference module calls ``logging.basicConfig(level=INFO)`` when imported,
    and every INFO record of the process then reached stderr (a fresh-user review: ``doctor``
    on a database one revision behind printed Alembic's 90 lines of the upgrade). Loading the
    model leaves the root logger's handlers and level as they were; in a new process, since
    this one may have imported wordllama already."""
    import subprocess
    import sys

    code = (
        "import logging\n"
        "from continuity.retrieval.embedder import load_embedder\n"
        "from continuity.retrieval.settings import RetrievalSettings\n"
        "root = logging.getLogger()\n"
        "before = (list(root.handlers), root.level)\n"
        "assert load_embedder(RetrievalSettings()) is not None\n"
        "import wordllama.inference\n"
        "print(before == (list(root.handlers), root.level), root.level, len(root.handlers))\n"
        "logging.getLogger('alembic.runtime.migration').info('not shown')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "30", "0"]
    assert done.stderr == ""
