"""The offline extractor's triple precision and recall on a small corpus of its own (`make bench-offline`).

Each text of the corpus is given with the facts a careful reader states from it, written as a
real model is asked to (ai/prompts/extract.py: names as written, snake_case relations, periods
from the text). About a third of the texts are written the way people write and the rules do not
read (possessives, passives, relative clauses, facts inside descriptions): the figures say what
the offline extractor is worth, not what it was tuned to. A triple counts when its source,
relation and target match (names compared case-blind); its period is scored apart, over the
triples found.

    .venv/bin/python bench/offline_extractor.py [--show-misses]
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from gligabao.ai.offline.sentences import extract_sentences

SAID = datetime(2026, 6, 15, 10, 0, tzinfo=UTC)
Y = "{}-01-01T00:00:00Z".format

# (text, [(source, relation, target, valid_at, invalid_at)]): plain declarative sentences, the
# kind the rules are for
PLAIN: list[tuple[str, list[tuple[str, str, str, str | None, str | None]]]] = [
    ("Alice works at Acme.", [("Alice", "works_at", "Acme", None, None)]),
    ("Bob lives in Berlin.", [("Bob", "lives_in", "Berlin", None, None)]),
    ("Carla is married to Dev.", [("Carla", "married_to", "Dev", None, None)]),
    ("Eli was born in Haifa in 1984.", [("Eli", "born_in", "Haifa", Y(1984), None)]),
    (
        "Fatima works at Globex and lives in Dubai.",
        [("Fatima", "works_at", "Globex", None, None), ("Fatima", "lives_in", "Dubai", None, None)],
    ),
    ("George moved to Madrid in 2022.", [("George", "lives_in", "Madrid", Y(2022), None)]),
    ("Hiro left Sony in 2020.", [("Hiro", "works_at", "Sony", None, Y(2020))]),
    ("In 2018, Ines joined Spotify.", [("Ines", "works_at", "Spotify", Y(2018), None)]),
    ("Jamal now works at Stripe.", [("Jamal", "works_at", "Stripe", None, None)]),
    (
        "Keiko lives in Osaka. She works at Nintendo.",
        [("Keiko", "lives_in", "Osaka", None, None), ("Keiko", "works_at", "Nintendo", None, None)],
    ),
    ("Liam worked at Intel from 2012 to 2019.", [("Liam", "works_at", "Intel", Y(2012), Y(2019))]),
    (
        "Maya and Noor live in Amman.",
        [("Maya", "lives_in", "Amman", None, None), ("Noor", "lives_in", "Amman", None, None)],
    ),
    ("Oscar is the CEO of Vandelay Industries.", [("Oscar", "works_at", "Vandelay Industries", None, None)]),
    ("Paula studied at Oxford.", [("Paula", "studied_at", "Oxford", None, None)]),
    ("Quentin founded Lumen Labs in 2015.", [("Quentin", "founded", "Lumen Labs", Y(2015), None)]),
    ("Rosa knows Sergei.", [("Rosa", "knows", "Sergei", None, None)]),
    (
        "Tariq moved from Cairo to Toronto in 2021.",
        [("Tariq", "lives_in", "Cairo", None, Y(2021)), ("Tariq", "lives_in", "Toronto", Y(2021), None)],
    ),
    ("Uma divorced Victor in 2019.", [("Uma", "married_to", "Victor", None, Y(2019))]),
    ("Wen lived in Shanghai until 2017.", [("Wen", "lives_in", "Shanghai", None, Y(2017))]),
    (
        "Xavier is married to Yara. They live in Lisbon.",
        [
            ("Xavier", "married_to", "Yara", None, None),
            ("Xavier", "lives_in", "Lisbon", None, None),
            ("Yara", "lives_in", "Lisbon", None, None),
        ],
    ),
    (
        "User: I work at Datadog and I live in Paris.",
        [("User", "works_at", "Datadog", None, None), ("User", "lives_in", "Paris", None, None)],
    ),
    (
        "User: I moved to Denver last year.\nAssistant: How do you like it?",
        [("User", "lives_in", "Denver", Y(2025), None)],
    ),
    ("Zoe manages the Atlas team.", [("Zoe", "manages", "Atlas team", None, None)]),
    ("Acme is headquartered in Boston.", [("Acme", "located_in", "Boston", None, None)]),
    ("Kraków is a city in Poland.", [("Kraków", "located_in", "Poland", None, None)]),
    ("Amir reports to Bea.", [("Amir", "reports_to", "Bea", None, None)]),
    ("Chen no longer lives in Taipei.", [("Chen", "lives_in", "Taipei", None, "2026-06-15T10:00:00Z")]),
    ("Dario joined Ferrari on 3 May 2021.", [("Dario", "works_at", "Ferrari", "2021-05-03T00:00:00Z", None)]),
    ("Emma is friends with Farah.", [("Emma", "friend_of", "Farah", None, None)]),
    ("Gita owns Bluebird Cafe.", [("Gita", "owns", "Bluebird Cafe", None, None)]),
]
# the way people also write, which the rules do not read
NATURAL: list[tuple[str, list[tuple[str, str, str, str | None, str | None]]]] = [
    (
        "Alice's husband Tom is a doctor in Leeds.",
        [("Tom", "married_to", "Alice", None, None), ("Tom", "lives_in", "Leeds", None, None)],
    ),
    ("Ben was hired by Amazon last spring.", [("Ben", "works_at", "Amazon", Y(2025), None)]),
    ("Globex hired Cora in 2023.", [("Cora", "works_at", "Globex", Y(2023), None)]),
    (
        "Dmitri, who lives in Riga, works for Baltic Air.",
        [("Dmitri", "lives_in", "Riga", None, None), ("Dmitri", "works_at", "Baltic Air", None, None)],
    ),
    (
        "After ten years at Siemens, Elena retired.",
        [("Elena", "works_at", "Siemens", None, "2026-06-15T10:00:00Z")],
    ),
    (
        "Felix's sister Greta lives in Vienna.",
        [("Greta", "sibling_of", "Felix", None, None), ("Greta", "lives_in", "Vienna", None, None)],
    ),
    ("Hugo and his wife Iris run a bakery in Nantes.", [("Hugo", "married_to", "Iris", None, None)]),
    ("Jana is a software engineer at Shopify in Ottawa.", [("Jana", "works_at", "Shopify", None, None)]),
    (
        "Karl got married to Lena in June 2016.",
        [("Karl", "married_to", "Lena", "2016-06-01T00:00:00Z", None)],
    ),
    ("Marco has been working at Enel since 2014.", [("Marco", "works_at", "Enel", Y(2014), None)]),
    (
        "Nadia, born in Tunis, now lives in Marseille.",
        [("Nadia", "born_in", "Tunis", None, None), ("Nadia", "lives_in", "Marseille", None, None)],
    ),
    ("The Louvre is located in Paris.", [("The Louvre", "located_in", "Paris", None, None)]),
    ("Otto quit his job at Bosch last month.", [("Otto", "works_at", "Bosch", None, "2026-05-01T00:00:00Z")]),
    (
        "Pia relocated to Sydney with her partner Quinn.",
        [("Pia", "lives_in", "Sydney", None, None), ("Quinn", "lives_in", "Sydney", None, None)],
    ),
    (
        "Raj works remotely for Atlassian from Pune.",
        [("Raj", "works_at", "Atlassian", None, None), ("Raj", "lives_in", "Pune", None, None)],
    ),
]


def measure(corpus, show_misses: bool = False) -> dict[str, float]:
    found = correct = gold_total = periods_right = 0
    for text, gold in corpus:
        extraction = extract_sentences(text, SAID)
        predicted = {(e.source.casefold(), e.relation, e.target.casefold()): e for e in extraction.edges}
        expected = {(s.casefold(), r, t.casefold()): (v, i) for s, r, t, v, i in gold}
        hits = predicted.keys() & expected.keys()
        found += len(predicted)
        gold_total += len(expected)
        correct += len(hits)
        periods_right += sum(
            (predicted[key].valid_at, predicted[key].invalid_at) == expected[key] for key in hits
        )
        if show_misses and predicted.keys() != expected.keys():
            print(
                f"  {text!r}\n    missed {sorted(expected.keys() - hits)}\n    extra  {sorted(predicted.keys() - hits)}"
            )
    return {
        "texts": len(corpus),
        "gold_triples": gold_total,
        "extracted": found,
        "precision": correct / found if found else 0.0,
        "recall": correct / gold_total if gold_total else 0.0,
        "periods_right": periods_right / correct if correct else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show-misses", action="store_true", help="print each text whose triples differ")
    show_misses = parser.parse_args().show_misses
    for name, corpus in (("plain", PLAIN), ("natural", NATURAL), ("all", PLAIN + NATURAL)):
        figures = measure(corpus, show_misses and name != "all")
        print(
            f"{name:>8}: {figures['texts']} texts, {figures['gold_triples']} gold triples, "
            f"{figures['extracted']} extracted: precision {figures['precision']:.3f}, "
            f"recall {figures['recall']:.3f}; periods right on {figures['periods_right']:.3f} of those found"
        )


if __name__ == "__main__":
    main()
