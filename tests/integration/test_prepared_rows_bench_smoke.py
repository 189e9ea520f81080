"""bench/prepared_rows.py in small: both forms of a prepared text's vectors are written, read back
as written and deleted (the bench itself: `.venv/bin/python bench/prepared_rows.py`)."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

from graph_rows import add_artifact, add_dataset

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import prepared_rows as bench


def test_both_forms_write_read_back_and_delete_a_prepared_text(db):
    from gligabao.db.connection import register_vector
    from gligabao.db.prepared import WaitingText

    register_vector(db)
    db.execute("CREATE TEMP TABLE prepared_before (artifact_id bigint PRIMARY KEY, vectors real[])")
    dataset = add_dataset(db, "u1")
    artifact = add_artifact(db, dataset)
    db.execute("UPDATE gb_artifacts SET status = 'pending' WHERE id = %s", [artifact])
    text = WaitingText(artifact, dataset, "x", None, datetime.now(UTC))
    vectors = [[0.5, -0.25, 1.0], [0.1, 2.0, -1.5]]  # 0.1: not exact in 4 bytes

    for form in (bench.as_vectors_now, bench.as_real_arrays_before):
        times = form(db, text, vectors)
        assert times["write"] > 0 and times["read"] > 0, form.__name__

    assert db.execute("SELECT count(*) FROM gb_prepared_texts").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM prepared_before").fetchone()[0] == 0
