"""Retrieval only: the memory an answer would be written from, for your own prompt. The query
runs its whole retrieval (keywords, the four vector indexes, expansion, passages) with one
embeddings request and no LLM call, and returns the context as the LLM would have read it, plus
its entities, edges and passages in the evidence format.

    make serve              # the local API on http://127.0.0.1:7878, with the provider keys set
    .venv/bin/python examples/retrieval_only.py [API_URL]
"""

from __future__ import annotations

import sys

from gligabao.client import LOCAL_API_URL, Memory

QUESTION = "Where does Alice work?"


def main(url: str = LOCAL_API_URL) -> None:
    with Memory(url, user_id="retrieval-user", dataset="notes") as memory:
        memory.remember("Alice is an engineer. Alice works at Acme.", session_id="chat-1")

        retrieved = memory.context(QUESTION, session_id="chat-2")
        for entity in retrieved.entities:
            print(f"entity  [{entity.id}] {entity.name} ({entity.type})")
        for edge in retrieved.edges:
            print(f"edge    [{edge.id}] {edge.source} {edge.relation} {edge.target}")

        # Your own model, your own prompt: the context is ready to paste into it.
        prompt = (
            "Answer from this memory only; cite the ids you use.\n\n"
            f"{retrieved.context}\n\nQuestion: {QUESTION}"
        )
        print(prompt)
        memory.delete_dataset("notes")


if __name__ == "__main__":
    main(*sys.argv[1:2])
