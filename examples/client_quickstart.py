"""The Python client in a minute: remember, query, read back, correct, export, forget and erase.

    make serve                                 # the local API on http://127.0.0.1:7878, with
                                               # ANTHROPIC_API_KEY and OPENAI_API_KEY set
    .venv/bin/python examples/client_quickstart.py [API_URL]

Against the deployed API, sign with your AWS credentials (AuthMode iam) or send a token (jwt):
    Memory("https://ID.execute-api.REGION.amazonaws.com", auth=SigV4(), user_id="u1")
    Memory("https://ID.execute-api.REGION.amazonaws.com", auth=BearerToken(token))
"""

from __future__ import annotations

import sys

from gligabao.client import LOCAL_API_URL, ApiError, Memory


def main(url: str = LOCAL_API_URL) -> None:
    with Memory(url, user_id="quickstart-user", dataset="quickstart") as memory:
        first = memory.remember(
            "Alice is an engineer. Alice lives in Paris.",
            session_id="chat-1",
            reference_time="2023-05-01T09:00:00Z",
        )
        second = memory.remember(
            "Alice moved to Rome in 2025.", session_id="chat-2", reference_time="2025-01-31T09:00:00Z"
        )
        for stored in (first, second):
            for edge in stored.edges:
                print(
                    f"stored  [edge {edge.id}] {edge.source} {edge.relation} {edge.target} (from {edge.valid_at})"
                )
            for old in stored.superseded:
                print(f"closed  [edge {old.id}] no longer holds from {old.invalid_at}")

        answer = memory.query("Where does Alice live?", session_id="chat-3")
        print(f"answer  {answer.answer}")
        for edge in answer.evidence.edges:
            print(f"because [edge {edge.id}] {edge.source} {edge.relation} {edge.target}")

        alice = next(entity for entity in first.entities if entity.name == "Alice")
        for edge in memory.entity(alice.id).edges:  # her timeline, superseded facts included
            print(
                f"history {edge.source} {edge.relation} {edge.target}: {edge.valid_at} -> {edge.invalid_at or 'now'}"
            )

        moved = second.edges[0]  # a fact corrected by hand: the old one stays in history, superseded
        fixed = memory.correct(moved.id, valid_at="2025-03-01T00:00:00Z", reason="she moved in March")
        print(f"fixed   [edge {moved.id}] -> [edge {fixed.edge.id}] holds from {fixed.edge.valid_at}")

        session = memory.session("chat-1")
        print(f"session chat-1 remembered {len(session.artifacts)} text(s), {len(session.edges)} fact(s)")
        graph = memory.graph(include_expired=True)
        print(f"graph   {len(graph.entities)} entities, {len(graph.edges)} edges")

        print(f"forgot  {memory.forget_artifact(first.artifact_id).deleted}")
        try:
            memory.artifact(first.artifact_id)
        except ApiError as error:  # every API error carries its status and the API's text
            print(f"gone    {error.status}: {error.error}")
        memory.erase_user()  # every row of quickstart-user, in every dataset


if __name__ == "__main__":
    main(*sys.argv[1:2])
