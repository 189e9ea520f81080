"""A user id is an exact identity: an id that differs from another only by surrounding whitespace
or invisible characters never reaches the other's data (it is refused with 400, never trimmed)."""

from urllib.parse import quote

import pytest
from conftest import count_rows
from graph_rows import alice_works_at_acme

LOOKALIKES = [
    "u1\u00a0",  # trailing no-break space
    " u1",
    "u1 ",
    "\u3000u1",  # ideographic space
    "u1\u2003",  # em space
    "u1\u2028",  # line separator
    "u1\u200b",  # zero-width space
    "\ufeffu1",  # byte-order mark
    "u1\t",
    "u1\n",
]


@pytest.mark.parametrize("user_id", LOOKALIKES, ids=[repr(u) for u in LOOKALIKES])
def test_a_lookalike_user_id_cannot_list_query_or_delete_the_user_s_data(api, db, user_id):
    alice_works_at_acme(db)
    entities_before = count_rows(db, "gb_entities")

    listed = api.get(f"/v1/gb/datasets?user_id={quote(user_id)}")
    deleted = api.delete(f"/v1/gb/datasets/main?user_id={quote(user_id)}")
    queried = api.post("/v1/gb/query", {"user_id": user_id, "query": "Where does Alice work?"})
    remembered = api.post("/v1/gb/remember", {"user_id": user_id, "text": "Alice works at Acme."})

    for reply in (listed, deleted, queried, remembered):
        assert reply.status == 400, reply.raw
        assert "user_id" in reply.json["error"]
    assert count_rows(db, "gb_datasets") == 1
    assert count_rows(db, "gb_entities") == entities_before


def test_a_user_id_with_inner_spaces_is_its_own_user(api, db):
    alice_works_at_acme(db, user_id="ada lovelace")

    assert [d["name"] for d in api.get("/v1/gb/datasets?user_id=ada%20lovelace").json["datasets"]] == ["main"]
    assert api.get("/v1/gb/datasets?user_id=ada%20%20lovelace").json == {"datasets": []}
    assert api.get("/v1/gb/datasets?user_id=adalovelace").json == {"datasets": []}
