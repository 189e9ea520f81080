"""Search with scores and filters, and facts as a resource: what mem0 or Zep users reach for first.

Remember two texts with labels of your own (`metadata`), search them with scores and reasons and
no LLM call, narrow the search by relation or label, then read one fact with where it comes from
and walk every fact of the dataset a page at a time.

    make serve              # the local API on http://127.0.0.1:7878, with the provider keys set
    .venv/bin/python examples/search_and_facts.py [API_URL]
"""

from __future__ import annotations

import sys

from gligabao.client import LOCAL_API_URL, Memory


def main(url: str = LOCAL_API_URL) -> None:
    with Memory(url, user_id="search-user", dataset="crm") as memory:
        memory.remember(
            "Alice works at Acme.", session_id="call-1", metadata={"source": "crm", "account": 42}
        )
        memory.remember("Alice lives in Paris.", session_id="chat-7", metadata={"source": "chat"})

        found = memory.search("Where does Alice work and live?", limit=5)
        for edge in found.edges:
            print(
                f"found   [{edge.id}] {edge.source} {edge.relation} {edge.target} {edge.score:.2f} {edge.reasons}"
            )

        from_crm = memory.search("Alice", filters={"metadata": {"source": "crm"}})
        print("crm     " + ", ".join(f"{e.source} {e.relation} {e.target}" for e in from_crm.edges))

        fact = memory.edge(from_crm.edges[0].id)
        print(
            f"fact    [{fact.id}] from artifacts {[a.id for a in fact.artifacts]}, sessions {fact.sessions}"
        )
        print(f"labels  {fact.artifacts[0].metadata}")

        for edge in memory.edges(limit=1, filters={"relations": ["lives_in"]}):
            print(f"listed  [{edge.id}] {edge.source} {edge.relation} {edge.target}")
        memory.delete_dataset("crm")


if __name__ == "__main__":
    main(*sys.argv[1:2])
