"""What an ontology costs: reading an OWL document and conforming one extraction to it.

What an ontology costs: reading an OWL RDF/XML document (the expat check and rdflib,
`memory/owl.py`), at the size of the test ontology and at the most types allowed (500 classes and
500 object properties), and conforming one extraction to it (`memory/ontology.py`, `conform`, no
embeddings); best of --repeat, in-process, no database.

    python bench/ontology.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "layers" / "core")]

from gligabao.ai.prompts.extract import Extraction  # noqa: E402
from gligabao.memory.extraction import merge_extractions  # noqa: E402
from gligabao.memory.ontology import conform  # noqa: E402
from gligabao.memory.owl import parse_owl  # noqa: E402

HEAD = (
    '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
    'xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#" xmlns:owl="http://www.w3.org/2002/07/owl#">'
)


def largest_document(types: int = 500) -> str:
    """`types` classes, each a subclass of the one before, and as many properties between them."""
    classes = [
        f'<owl:Class rdf:about="http://x/Class{i}"><rdfs:comment>class {i} of the benchmark</rdfs:comment>'
        + (f'<rdfs:subClassOf rdf:resource="http://x/Class{i - 1}"/>' if i else "")
        + "</owl:Class>"
        for i in range(types)
    ]
    properties = [
        f'<owl:ObjectProperty rdf:about="http://x/rel{i}"><rdfs:domain rdf:resource="http://x/Class{i}"/>'
        f'<rdfs:range rdf:resource="http://x/Class{(i + 1) % types}"/></owl:ObjectProperty>'
        for i in range(types)
    ]
    return HEAD + "".join(classes + properties) + "</rdf:RDF>"


def best_ms(repeat: int, run) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    people = (ROOT / "tests" / "ontologies" / "people.owl").read_text()
    largest = largest_document()
    ontology = parse_owl("largest", largest, "map", max_types=500)
    extraction = Extraction.model_validate(
        {
            "entities": [{"name": f"E{i}", "type": f"Class{i}"} for i in range(50)],
            "edges": [{"source": f"E{i}", "target": f"E{i + 1}", "relation": f"rel{i}"} for i in range(49)],
        }
    )
    now = datetime.now(UTC)
    rows = [
        (
            f"parse people.owl ({len(people.encode()):,} bytes)",
            lambda: parse_owl("p", people, "map", max_types=500),
        ),
        (
            f"parse 500 classes + 500 properties ({len(largest.encode()):,} bytes)",
            lambda: parse_owl("l", largest, "map", max_types=500),
        ),
        (
            "conform 50 entities and 49 facts to it",
            lambda: conform(merge_extractions([extraction], now), ontology),
        ),
    ]
    for label, run in rows:
        print(f"{label}: {best_ms(args.repeat, run):.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
