"""The name and gram lookups find nothing waiting in a pending list (migration 0036): every GIN
index of the schema is built without fastupdate, so a remember's entries are in the index when it
commits. With PostgreSQL's default they wait in a pending list that every lookup reads whole, until
a VACUUM or an autoanalyze moves them: the names a remember looks up right after earlier remembers,
and the keyword statement of a query right after an import, paid that read."""

from __future__ import annotations

from remember_helpers import chain_text, use_rule_based_model

from gligabao import bootstrap
from gligabao.memory.remember import TextToRemember, remember_text


def gin_indexes(db) -> dict[str, list[str]]:
    """Each GIN index of the schema and its storage options."""
    rows = db.execute(
        """SELECT c.relname, coalesce(c.reloptions, '{}')
           FROM pg_index i
           JOIN pg_class c ON c.oid = i.indexrelid
           JOIN pg_am a ON a.oid = c.relam
           WHERE a.amname = 'gin' AND c.relnamespace = 'public'::regnamespace"""
    ).fetchall()
    return dict(rows)


def test_every_gin_index_is_built_without_a_pending_list(db):
    indexes = gin_indexes(db)

    assert {"gb_entities_name_grams", "gb_entities_name_keys", "gb_entity_descriptions_grams"} <= set(indexes)
    assert {name: options for name, options in indexes.items() if "fastupdate=off" not in options} == {}


def test_the_entries_of_remembered_names_and_descriptions_are_in_the_index_at_once(
    db, fake_anthropic, fake_openai
):
    use_rule_based_model(fake_anthropic)
    for dataset in ("first", "second", "third"):
        remember_text(bootstrap.bundle(), TextToRemember(user_id="u1", dataset=dataset, text=chain_text(10)))

    # gin_clean_pending_list moves what waits in an index's pending list: the pages it emptied.
    pending = {
        name: db.execute("SELECT gin_clean_pending_list(%s::regclass)", [name]).fetchone()[0]
        for name in gin_indexes(db)
    }

    assert db.execute("SELECT count(*) FROM gb_entities").fetchone()[0] >= 30
    assert pending == dict.fromkeys(pending, 0)
