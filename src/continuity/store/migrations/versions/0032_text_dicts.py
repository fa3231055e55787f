"""0032 text_dicts: a row's content JSON compressed with a dictionary the store trained on its
own rows (issue 43 goal 2: store <= 1.0x the input).

Why: each long row's content JSON was one zstd frame of its own (revision 0024), and a frame
of a few hundred bytes finds little to repeat inside itself: on the 320 MB tree of
``bench/peers.py`` the 80,000 long rows' 104 MB of JSON took 43 MB, and the 137,000 short rows
(under 256 bytes, kept as text) another 15 MB. ``text_dicts`` holds the dictionaries a store
trained (``store.rawcodec.TextDict``: zstd's dictionary id and its bytes); a frame names the
dictionary it was made with in its header, so rows written before and after, or with another
dictionary, each decode alone. Nothing already stored is rewritten.

Downgrade: every frame made with a dictionary is made again without one (or the row's JSON
kept as text, as revision 0024 decides), then the table is dropped.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0032"
down_revision = "0031"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "text_dicts",
        sa.Column("dict_id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
    )


def downgrade() -> None:
    import zstandard

    bind = op.get_bind()
    dicts = {
        int(i): zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(bytes(d)))
        for i, d in bind.execute(sa.text("SELECT dict_id, data FROM text_dicts")).all()
    }
    if dicts:
        plain = zstandard.ZstdCompressor(level=3, write_checksum=False)
        rows = bind.execute(
            sa.text("SELECT entry_no, content_z FROM entries WHERE content_z IS NOT NULL")
        ).all()
        for entry_no, frame in rows:
            frame = bytes(frame)
            dict_id = zstandard.get_frame_parameters(frame).dict_id
            if not dict_id:
                continue
            data = dicts[dict_id].decompress(frame)
            if len(data) < 256:  # revision 0024's rule: short JSON is kept as text
                values = {"c": data.decode("utf-8", "surrogatepass"), "z": None}
            else:
                values = {"c": "", "z": plain.compress(data)}
            bind.execute(
                sa.text("UPDATE entries SET content = :c, content_z = :z WHERE entry_no = :n"),
                {**values, "n": entry_no},
            )
    op.drop_table("text_dicts")
