"""Schemathesis against the running local API, from the OpenAPI document it serves, every phase and
check (tests/fuzz_run.py): every response conforms to the document (status, content type, headers,
body), no 5xx but the documented 501/502/503, data the document calls invalid is refused, and a
method a path is not served with is a 405 with Allow. A bounded run; `make fuzz` is the long one."""

from fuzz_run import DatabaseWatch, fuzz

# Hypothesis examples per operation and phase: 63 s alone on two cores for the routes of today
# (75 s at 60); `make bench-fuzz` runs the long fuzz.
MAX_EXAMPLES = 40


def documented_operations() -> set[str]:
    """Every operation of the OpenAPI document (the routes themselves: test_openapi_truth.py holds the
    document to the template's routes) but GET /v1/gb/openapi.json, which Schemathesis leaves out as
    the document's own URL."""
    from gligabao.api.app import openapi_document
    from gligabao.api.routes import all_routers

    document = openapi_document(all_routers())
    every = {f"{method.upper()} {path}" for path, ops in document["paths"].items() for method in ops}
    return every - {"GET /v1/gb/openapi.json"}


def test_every_response_of_every_route_conforms_to_the_openapi_document(local_api_server, db, models):
    report = fuzz(local_api_server, max_examples=MAX_EXAMPLES, seed=20251130, database=DatabaseWatch(db))

    assert report.errors == []
    assert report.failures == [], "\n\n".join(report.failures)
    assert report.server_errors() == {}
    exercised = {operation for operation, _ in report.statuses}
    assert exercised >= documented_operations()
    assert set(report.by_status()) >= {200, 400, 404, 405}
    # Requests sent to the seeded user (tests/fuzz_run.py) reach the model and the graph: answers, rows.
    assert report.statuses[("POST /v1/gb/query", 200)] > 0
    assert report.cited_answers > 0
    assert report.statuses[("GET /v1/gb/graph", 200)] > 0
    # A method a path is not served with: 405.
    other_methods = {status for (operation, status) in report.statuses if operation.endswith("other methods")}
    assert other_methods <= {405}
    assert report.requests >= 300
