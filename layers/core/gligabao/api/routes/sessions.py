"""GET /v1/gb/sessions/{session_id} and GET /v1/gb/artifacts/{id}."""

from gligabao.api.routes.pending import pending_router

router = pending_router(
    [
        ("GET", "/v1/gb/sessions/<session_id>", "sessions"),
        ("GET", "/v1/gb/artifacts/<artifact_id>", "artifacts"),
    ]
)
