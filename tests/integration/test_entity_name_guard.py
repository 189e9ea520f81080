"""Entity resolution's name guard (SPEC section 5, step 5; migration 0011): a normalized name
matches first; else the best vector match at or above the threshold, among the stored entities
whose name could be the same as the new one's (one is a short form of the other). So namesakes
and things of a kind that vectors cannot tell apart ("violin" / "cello", both "a musical
instrument") stay distinct, while an alias ("Acme" for "Acme Robotics") still resolves.

Remembered in-process through the real SDKs: the extraction is scripted on the Anthropic fake,
the entity vectors are set on the OpenAI fake (`name (type): description`, as remember embeds)."""

from __future__ import annotations

import pytest
from conftest import reconfigure
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from query_helpers import Graph
from remember_helpers import unit, with_cosine

from gligabao import bootstrap
from gligabao.db import graph_writes
from gligabao.limits import Limits
from gligabao.memory.remember import TextToRemember, remember_text
from gligabao.settings import Settings


def entity(name: str, type_: str, description: str = "") -> dict:
    return {"name": name, "type": type_, "description": description}


@pytest.fixture
def script(db, fake_anthropic, fake_openai):
    """text -> the extraction the model replies (the resolve stage judges nothing new)."""
    replies: dict[str, dict] = {}

    def responder(body: dict) -> dict:
        content = body["messages"][0]["content"]
        content = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
        if "<new_facts>" in content:
            return {"facts": []}
        return next(reply for text, reply in replies.items() if f"<text>\n{text}\n</text>" in content)

    fake_anthropic.responder = responder
    return replies


def remember(script: dict, text: str, entities: list[dict], facts=(), user_id="u1", dataset="main"):
    """Remember `text`, extracted as `entities` and `facts` ((source, relation, target))."""
    script[text] = {
        "entities": entities,
        "edges": [
            {"source": s, "target": t, "relation": r, "description": f"{s} {r} {t}."} for s, r, t in facts
        ],
    }
    return remember_text(bootstrap.bundle(), TextToRemember(user_id, dataset, text))


def names_of_entities(db) -> list[str]:
    return [row[0] for row in db.execute("SELECT name FROM gb_entities ORDER BY name")]


def facts_of(db) -> set[tuple[str, str, str]]:
    return set(
        db.execute(
            """SELECT s.name, e.relation, t.name FROM gb_edges e
               JOIN gb_entities s ON s.id = e.source_id JOIN gb_entities t ON t.id = e.target_id"""
        ).fetchall()
    )


# --- the rule on names


@pytest.mark.parametrize(
    "name_a, name_b",
    [
        ("acme", "acme robotics"),  # a company by its first word
        ("smith", "alice smith"),  # a person by surname
        ("a. chen", "alice chen"),  # an initial
        ("dr. alice chen", "alice chen"),  # a title
        ("ibm", "international business machines"),  # initials
        ("u.s.", "united states"),
        ("acme corp.", "acme corporation"),  # an abbreviated word
        ("acme co", "acme"),  # "co" is no rank
        ("ge", "general electric"),  # initials, though "general" begins no word of them
        ("senior treasurer", "senior treasurer office"),  # the rank in both
    ],
)
def test_names_where_one_is_a_short_form_of_the_other_could_be_one_entity(db, name_a, name_b):
    for a, b in ((name_a, name_b), (name_b, name_a)):
        assert db.execute("SELECT gb_could_be_one_entity(%s, %s)", [a, b]).fetchone()[0] is True


@pytest.mark.parametrize(
    "name_a, name_b",
    [
        ("alice chen", "alice park"),  # namesakes
        ("jonas reyes", "david reyes"),
        ("violin", "cello"),  # things of a kind
        ("sable publishing", "pioneer publishing"),
        ("finnish", "estonian"),
        ("ibm", "intel"),
        ("treasurer", "senior treasurer"),  # a word of rank added (migration 0045)
        ("president", "vice president"),
        ("software engineer", "lead software engineer"),
        ("alice chen", "alice chen junior"),
    ],
)
def test_names_that_each_hold_a_word_the_other_lacks_are_two_entities(db, name_a, name_b):
    for a, b in ((name_a, name_b), (name_b, name_a)):
        assert db.execute("SELECT gb_could_be_one_entity(%s, %s)", [a, b]).fetchone()[0] is False


RANKS = ["senior", "junior", "chief", "head", "lead", "principal", "deputy", "vice", "assistant",
         "associate", "acting", "interim", "former", "ex"]  # fmt: skip
# Words of 3 letters or more: a one-word name is never the initials of itself and a rank.
WORDS = st.text(alphabet="bcdfgmnprstz", min_size=3, max_size=7).filter(lambda word: word not in RANKS)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(WORDS, min_size=1, max_size=3), rank=st.sampled_from(RANKS), at=st.integers(0, 3))
def test_a_name_with_a_word_of_rank_added_is_never_the_name_and_without_it_still_is(db, words, rank, at):
    """Whatever the name, the rank and where it stands: "deputy head teacher" is not "head teacher"
    (migration 0045), and the name with another plain word added still could be (0011)."""
    name = " ".join(words)
    ranked = " ".join([*words[:at], rank, *words[at:]])
    longer = " ".join([*words, "zzq"])

    guard = "SELECT gb_could_be_one_entity(%s, %s), gb_could_be_one_entity(%s, %s)"
    assert db.execute(guard, [name, ranked, ranked, name]).fetchone() == (False, False)
    assert db.execute(guard, [name, longer, longer, name]).fetchone() == (True, True)


def test_the_guard_and_the_name_keys_answer_alike_with_only_pg_catalog_on_the_search_path(db):
    """As ANALYZE and autovacuum run them (migration 0026): the functions they call are found."""
    pairs = [("acme", "acme robotics"), ("ibm", "international business machines"), ("violin", "cello")]
    statement = "SELECT public.gb_could_be_one_entity(%s, %s), public.gb_name_keys(1, %s)"
    answers = [tuple(db.execute(statement, [a, b, b]).fetchone()) for a, b in pairs]

    db.execute("SET search_path = pg_catalog, pg_temp")
    try:
        assert [tuple(db.execute(statement, [a, b, b]).fetchone()) for a, b in pairs] == answers
    finally:
        db.execute("RESET search_path")
    assert [answer[0] for answer in answers] == [True, True, False]


# --- remember


@pytest.mark.parametrize(
    ("name_guard", "created", "facts"),
    [
        (True, True, {("Alice Chen", "lives_in", "Lyon"), ("Alice Park", "lives_in", "Porto")}),
        # off, the spec's rule: the vector alone makes the namesakes one, with both facts
        (False, False, {("Alice Chen", "lives_in", "Lyon"), ("Alice Chen", "lives_in", "Porto")}),
    ],
)
def test_two_namesakes_with_the_same_vector_stay_two_entities_unless_the_name_guard_is_off(
    db, script, fake_openai, name_guard, created, facts
):
    reconfigure(limits=Limits(entity_name_guard=name_guard))
    fake_openai.override("Alice Chen (person): a pediatrician", unit(0))
    fake_openai.override("Alice Park (person): a pediatrician", unit(0))  # cosine 1: only names differ
    remember(
        script,
        "Alice Chen, a pediatrician, lives in Lyon.",
        [entity("Alice Chen", "person", "a pediatrician"), entity("Lyon", "city")],
        [("Alice Chen", "lives_in", "Lyon")],
    )

    second = remember(
        script,
        "Alice Park, a pediatrician, lives in Porto.",
        [entity("Alice Park", "person", "a pediatrician"), entity("Porto", "city")],
        [("Alice Park", "lives_in", "Porto")],
    )

    assert second.entities[0].created is created
    assert facts_of(db) == facts


def test_two_instruments_described_alike_stay_two(db, script, fake_openai):
    fake_openai.override("violin (instrument): a musical instrument", unit(0))
    fake_openai.override("cello (instrument): a musical instrument", with_cosine(0.95))
    remember(
        script,
        "Ivy plays the violin.",
        [entity("Ivy", "person"), entity("violin", "instrument", "a musical instrument")],
        [("Ivy", "plays", "violin")],
    )

    remember(
        script,
        "Mila plays the cello.",
        [entity("Mila", "person"), entity("cello", "instrument", "a musical instrument")],
        [("Mila", "plays", "cello")],
    )

    assert facts_of(db) == {("Ivy", "plays", "violin"), ("Mila", "plays", "cello")}


def test_a_promotion_to_a_senior_title_is_a_new_title_not_the_old_one_restated(db, script, fake_openai):
    """The vectors of the two titles are as close as a model makes them: a vector match alone would
    make "senior treasurer" the stored "treasurer", and the promotion a restatement."""
    fake_openai.override("treasurer (job title): ", unit(0))
    fake_openai.override("senior treasurer (job title): ", with_cosine(0.95))
    remember(
        script,
        "Kofi Bhatt is the treasurer.",
        [entity("Kofi Bhatt", "person"), entity("treasurer", "job title")],
        [("Kofi Bhatt", "holds_title", "treasurer")],
    )

    promoted = remember(
        script,
        "Kofi Bhatt was promoted to senior treasurer.",
        [entity("Kofi Bhatt", "person"), entity("senior treasurer", "job title")],
        [("Kofi Bhatt", "holds_title", "senior treasurer")],
    )

    assert [(e.name, e.created) for e in promoted.entities] == [
        ("Kofi Bhatt", False),
        ("senior treasurer", True),
    ]
    assert facts_of(db) == {
        ("Kofi Bhatt", "holds_title", "treasurer"),
        ("Kofi Bhatt", "holds_title", "senior treasurer"),
    }


def test_the_name_guard_is_on_unless_turned_off():
    assert Settings.from_env({}).limits.entity_name_guard is True
    assert Settings.from_env({"GB_ENTITY_NAME_GUARD": "off"}).limits.entity_name_guard is False


def test_an_alias_that_is_a_short_form_still_resolves_by_its_vector(db, script, fake_openai):
    fake_openai.override("Acme Robotics (organization): a robotics company", unit(0))
    fake_openai.override("Acme (organization): ", with_cosine(0.8))
    first = remember(
        script,
        "Acme Robotics is a robotics company.",
        [entity("Acme Robotics", "organization", "a robotics company")],
    )

    second = remember(
        script,
        "Boris joined Acme.",
        [entity("Boris", "person"), entity("Acme", "organization")],
        [("Boris", "works_at", "Acme")],
    )

    acme = next(e for e in second.entities if e.name == "Acme Robotics")
    assert (acme.id, acme.created) == (first.entities[0].id, False)
    assert facts_of(db) == {("Boris", "works_at", "Acme Robotics")}
    assert "Acme" not in names_of_entities(db)


def test_the_best_vector_match_is_the_best_whose_name_could_be_the_same(db, script, fake_openai):
    """A nearer entity of another name does not hide the alias behind it."""
    fake_openai.override("Acme Robotics (organization): ", with_cosine(0.8))
    fake_openai.override("Globex Robotics (organization): ", with_cosine(0.97))
    fake_openai.override("Acme (organization): ", unit(0))
    remember(
        script,
        "Acme Robotics and Globex Robotics make robots.",
        [entity("Acme Robotics", "organization"), entity("Globex Robotics", "organization")],
    )

    second = remember(
        script, "Boris joined Acme.", [entity("Boris", "person"), entity("Acme", "organization")]
    )

    assert [e.name for e in second.entities] == ["Boris", "Acme Robotics"]


def test_an_alias_below_the_threshold_is_a_new_entity(db, script, fake_openai):
    fake_openai.override("Acme Robotics (organization): a robotics company", unit(0))
    fake_openai.override("Acme (organization): ", with_cosine(0.74))
    remember(
        script,
        "Acme Robotics is a robotics company.",
        [entity("Acme Robotics", "organization", "a robotics company")],
    )

    second = remember(
        script, "Boris joined Acme.", [entity("Boris", "person"), entity("Acme", "organization")]
    )

    assert [(e.name, e.created) for e in second.entities] == [("Boris", True), ("Acme", True)]


def test_the_normalized_name_wins_over_a_nearer_vector(db, script, fake_openai):
    fake_openai.override("Alice Chen (person): a pediatrician", unit(0))
    fake_openai.override("Alice (person): a violinist", unit(1))
    fake_openai.override("ALICE (person): ", unit(0))  # the vector of Alice Chen, the name of Alice
    remember(
        script,
        "Alice Chen is a pediatrician and Alice is a violinist.",
        [entity("Alice Chen", "person", "a pediatrician"), entity("Alice", "person", "a violinist")],
    )

    second = remember(script, "ALICE lives in Porto.", [entity("ALICE", "person"), entity("Porto", "city")])

    assert (second.entities[0].name, second.entities[0].created) == ("Alice", False)


@pytest.mark.parametrize("other", [{"user_id": "u2"}, {"dataset": "other"}])
def test_an_alias_of_another_user_or_dataset_never_matches(db, script, fake_openai, other):
    fake_openai.override("Acme Robotics (organization): a robotics company", unit(0))
    fake_openai.override("Acme (organization): ", unit(0))
    remember(
        script,
        "Acme Robotics is a robotics company.",
        [entity("Acme Robotics", "organization", "a robotics company")],
    )

    second = remember(
        script, "Boris joined Acme.", [entity("Boris", "person"), entity("Acme", "organization")], **other
    )

    assert [(e.name, e.created) for e in second.entities] == [("Boris", True), ("Acme", True)]
    assert db.execute("SELECT count(*) FROM gb_entities WHERE name LIKE 'Acme%%'").fetchone()[0] == 2


# --- the guard's candidates, by the name keys of migration 0015

NAMES = [
    "acme", "acme robotics", "acme corp.", "acme corporation", "globex robotics", "smith", "alice smith",
    "a. chen", "alice chen", "alice park", "dr. alice chen", "chen", "ibm", "international business machines",
    "intel", "u.s.", "united states", "us", "violin", "cello", "jonas reyes", "david reyes", "j. reyes",
    "internationalization", "internationalization society", "internat", "a", "a b", "x", "!!!", "j.r.r. tolkien",
    "tolkien", "jrr tolkien", "sable publishing", "pioneer publishing", "st. louis", "saint louis", "louis",
]  # fmt: skip


def test_the_name_keys_find_every_stored_entity_the_guard_accepts(db):
    graph = Graph(db)
    ids = {name: graph.entity(name, embedding=None) for name in NAMES}
    db.execute("SELECT set_config('gligabao.user_id', 'u1', false)")

    for new in [*NAMES, "alice", "a. c.", "robotics", "jr tolkien", "internationalisation", "?"]:
        found = set(db.execute("SELECT gb_entities_could_be(%s, %s)", [graph.dataset_id, new]).fetchone()[0])
        accepted = {
            i for name, i in ids.items()
            if db.execute("SELECT gb_could_be_one_entity(%s, %s)", [name, new]).fetchone()[0]
        }  # fmt: skip
        assert accepted <= found, new
        # the keys narrow: not every entity is a candidate, nor every one sharing a first word
        if new == "violin":
            assert ids["cello"] not in found
        if new == "alice chen":
            assert ids["alice park"] not in found and ids["alice smith"] not in found


def test_the_name_keys_find_nothing_in_another_users_dataset(db):
    theirs = Graph(db, "u2")
    theirs.entity("acme robotics", embedding=None)
    db.execute("SELECT set_config('gligabao.user_id', 'u1', false)")

    assert db.execute("SELECT gb_entities_could_be(%s, 'acme')", [theirs.dataset_id]).fetchone()[0] == []


def test_a_vector_match_reads_only_the_entities_whose_name_could_be_the_same(db):
    """Not the whole dataset, nor the index's nearest rows, which a large table's plan read and
    then filtered: an alias behind 40 nearer entities of other names was missed."""
    graph = Graph(db)
    for i in range(300):
        graph.entity(f"Robot {i}", "organization", embedding=with_cosine(0.97))
    acme = graph.entity("Acme Robotics", "organization", embedding=with_cosine(0.8))
    db.execute("ANALYZE gb_entities")  # as autovacuum has done for a dataset of this size

    with bootstrap.bundle().database.transaction("u1", "main") as uow:
        matches = graph_writes.match_entities(
            uow.conn, graph.dataset_id, ["acme"], [unit(0)], threshold=0.75, exact_max=1000, walk=64
        )
        by_keys, fetched = (
            uow.conn.execute(
                "SELECT pg_stat_get_xact_numscans('gb_entities_name_keys'::regclass),"
                " pg_stat_get_xact_tuples_fetched('gb_entities'::regclass)"
            )
            .fetchone()
            .values()
        )

    assert matches == [acme]
    assert by_keys >= 1 and fetched < 30  # of 301 entities


def test_remembers_vector_searches_take_the_largest_dataset_compared_exactly_from_the_settings(
    db, script, monkeypatch
):
    """GB_EXACT_SCAN_MAX_ROWS reaches the entity match (name guard off) and the search for candidate
    facts: a dataset at most that large is compared by its full vectors (test_vector_indexes)."""
    import psycopg

    reconfigure(limits=Limits(entity_name_guard=False, exact_scan_max_rows=7))
    lyon = [entity("Alice", "person"), entity("Lyon", "city")]
    remember(script, "Alice lives in Lyon.", lyon, [("Alice", "lives_in", "Lyon")])
    sent = []
    execute = psycopg.Cursor.execute

    def recording(cursor, query, params=None, **kwargs):
        if "gb_nearest_" in str(query):
            sent.append(params["exact_max"])
        return execute(cursor, query, params, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", recording)
    remember(script, "Alice works in Lyon.", lyon, [("Alice", "works_in", "Lyon")])

    assert len(sent) >= 2 and set(sent) == {7}, sent  # the entity match, the candidate facts
