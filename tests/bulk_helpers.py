"""Helpers of the bulk import tests: a history of texts that tests what one text at a time decides
(chains of moves, restatements, duplicates, ends, namesakes), batches of it, and a dataset's graph
read row by row with no ids, so that two datasets' graphs compare."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from remember_helpers import call_handler, remember_handler

FIXED_NOW = datetime(2030, 1, 1, tzinfo=UTC)
PEOPLE = ["Alice Chen", "Alice Park", "Bob", "Carol", "Dan"]  # two namesakes


def history(texts: int = 200, chain: int = 20, seed: int = 3) -> list[dict]:
    """`texts` texts, one a day from 2001: for each person a chain of `chain` successive moves
    (back to a city lived in before, now and then); the others restate a move, say where someone
    works (or is employed: the same fact), that they left, or whom they know. Shuffled."""
    rng = random.Random(seed)
    start = datetime(2001, 1, 1, tzinfo=UTC)
    said = []
    for day in range(texts):
        person = PEOPLE[day % len(PEOPLE)]
        turn = day // len(PEOPLE)
        if turn < chain:
            sentence = (
                f"{person} lives in City{(turn * 3) % 7}."  # City0, City3, City6, City2, ... City0 again
            )
        else:
            sentence = rng.choice(
                [
                    f"{person} lives in City{rng.randrange(7)}.",
                    f"{person} works at Firm{rng.randrange(3)}.",
                    f"{person} is employed by Firm{rng.randrange(3)}.",
                    f"{person} left Firm{rng.randrange(3)} in {2001 + turn // 10}.",
                    f"{person} knows {rng.choice(PEOPLE)}.",
                    f"{person} is an engineer.",
                ]
            )
        said.append(
            {
                "text": sentence,
                "reference_time": (start + timedelta(days=day)).isoformat().replace("+00:00", "Z"),
                "session_id": f"s{day % 7}",
            }
        )
    rng.shuffle(said)
    return said


def send_batches(texts: list[dict], dataset: str, user_id: str = "u1", size: int = 100) -> list[int]:
    """POST the texts as batches of `size` (the route's most); the artifacts' ids."""
    ids = []
    handler = remember_handler()
    for start in range(0, len(texts), size):
        body = {"user_id": user_id, "dataset": dataset, "texts": texts[start : start + size]}
        reply = call_handler(handler, body, path="/v1/gb/remember/batch")
        assert reply.status == 202, reply.json
        ids += [a["artifact_id"] for a in reply.json["artifacts"]]
    return ids


_EDGE = """s.name || ' ' || e.relation || ' ' || t.name || ' @' || coalesce(e.valid_at::text, '-')"""


def graph_rows(db, dataset: str) -> dict[str, list[tuple]]:
    """A dataset's graph with no ids: its texts, entities, facts (with their times, the text that
    said each first and the fact that superseded it), sessions and provenance."""
    queries = {
        "artifacts": """SELECT a.text, a.session_id, a.reference_time, a.status, a.error, a.kind
                        FROM gb_artifacts a WHERE a.dataset_id = %(d)s""",
        "entities": """SELECT name, normalized_name, type, description FROM gb_entities WHERE dataset_id = %(d)s""",
        "edges": f"""SELECT {_EDGE}, e.description, e.invalid_at, e.expired_at, a.text, a.reference_time,
                            (SELECT {_EDGE.replace("e.", "n.").replace("s.", "ns.").replace("t.", "nt.")}
                             FROM gb_edges n JOIN gb_entities ns ON ns.id = n.source_id
                             JOIN gb_entities nt ON nt.id = n.target_id WHERE n.id = e.superseded_by)
                     FROM gb_edges e JOIN gb_entities s ON s.id = e.source_id JOIN gb_entities t ON t.id = e.target_id
                     LEFT JOIN gb_artifacts a ON a.id = e.artifact_id WHERE e.dataset_id = %(d)s""",
        "entity_sessions": """SELECT n.name, x.session_id FROM gb_entity_sessions x
                              JOIN gb_entities n ON n.id = x.entity_id WHERE n.dataset_id = %(d)s""",
        "edge_sessions": f"""SELECT {_EDGE}, x.session_id FROM gb_edge_sessions x JOIN gb_edges e ON e.id = x.edge_id
                             JOIN gb_entities s ON s.id = e.source_id JOIN gb_entities t ON t.id = e.target_id
                             WHERE e.dataset_id = %(d)s""",
        "entity_provenance": """SELECT n.name, a.text, a.reference_time FROM gb_entity_artifacts x
                                JOIN gb_entities n ON n.id = x.entity_id JOIN gb_artifacts a ON a.id = x.artifact_id
                                WHERE n.dataset_id = %(d)s""",
        "edge_provenance": f"""SELECT {_EDGE}, a.text, a.reference_time FROM gb_edge_artifacts x
                               JOIN gb_edges e ON e.id = x.edge_id JOIN gb_artifacts a ON a.id = x.artifact_id
                               JOIN gb_entities s ON s.id = e.source_id JOIN gb_entities t ON t.id = e.target_id
                               WHERE e.dataset_id = %(d)s""",
    }
    [dataset_id] = db.execute("SELECT id FROM gb_datasets WHERE name = %s", [dataset]).fetchone()
    return {
        name: sorted(db.execute(sql, {"d": dataset_id}).fetchall(), key=lambda row: [str(v) for v in row])
        for name, sql in queries.items()
    }
