"""Schemathesis against the running local API, from the OpenAPI document it serves, every phase and
check (tests/fuzz_run.py): every response conforms to the document (status, content type, headers,
body), no 5xx but the documented 501/502/503, data the document calls invalid is refused, and a
method a path is not served with is a 405 with Allow. A bounded run; `make bench-fuzz` is the long one."""

from fuzz_run import fuzz

# Hypothesis examples per operation and phase: about 600 requests, well under a minute on two cores.
MAX_EXAMPLES = 60
# Every documented operation but GET /v1/gb/openapi.json, which Schemathesis leaves out as the document's own URL.
OPERATIONS = {
    "GET /v1/gb/health",
    "GET /v1/gb/datasets",
    "DELETE /v1/gb/datasets/{dataset}",
    "GET /v1/gb/sessions/{session_id}",
    "GET /v1/gb/artifacts/{artifact_id}",
    "GET /v1/gb/entities/{entity_id}",
    "DELETE /v1/gb/artifacts/{artifact_id}",
    "DELETE /v1/gb/entities/{entity_id}",
    "DELETE /v1/gb/edges/{edge_id}",
    "PATCH /v1/gb/edges/{edge_id}",
    "DELETE /v1/gb/users/{user_id}",
    "GET /v1/gb/graph",
    "GET /v1/gb/datasets/{dataset}/graph",
    "POST /v1/gb/remember",
    "POST /v1/gb/eval/remember",
    "POST /v1/gb/query",
    "POST /v1/gb/eval/query",
    "POST /v1/gb/ontologies",
    "GET /v1/gb/ontologies",
    "GET /v1/gb/ontologies/{name}",
    "PUT /v1/gb/ontologies/{name}",
    "DELETE /v1/gb/ontologies/{name}",
    "GET /v1/gb/datasets/{dataset}/ontology",
    "PUT /v1/gb/datasets/{dataset}/ontology",
    "DELETE /v1/gb/datasets/{dataset}/ontology",
    "POST /v1/gb/search",
    "GET /v1/gb/edges",
    "GET /v1/gb/edges/{edge_id}",
}


def test_every_response_of_every_route_conforms_to_the_openapi_document(local_api_server, db, models):
    report = fuzz(local_api_server, max_examples=MAX_EXAMPLES, seed=20251130)

    assert report.errors == []
    assert report.failures == [], "\n\n".join(report.failures)
    assert report.server_errors() == {}
    exercised = {operation for operation, _ in report.statuses}
    assert exercised >= OPERATIONS
    assert set(report.by_status()) >= {200, 400, 404, 405}
    # Requests sent to the seeded user (tests/fuzz_run.py) reach the model and the graph: answers, rows.
    assert report.statuses[("POST /v1/gb/query", 200)] > 0
    assert report.cited_answers > 0
    assert report.statuses[("GET /v1/gb/graph", 200)] > 0
    # A method a path is not served with: 405.
    other_methods = {status for (operation, status) in report.statuses if operation.endswith("other methods")}
    assert other_methods <= {405}
    assert report.requests >= 300
