"""GET /v1/gb/graph."""

from gligabao.api.routes.pending import pending_router

router = pending_router([("GET", "/v1/gb/graph", "graph")])
