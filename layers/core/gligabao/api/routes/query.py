"""POST /v1/gb/query."""

from gligabao.api.routes.pending import pending_router

router = pending_router([("POST", "/v1/gb/query", "query")])
