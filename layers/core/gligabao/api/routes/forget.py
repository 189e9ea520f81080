"""DELETE /v1/gb/artifacts/{id}, /v1/gb/entities/{id} and /v1/gb/edges/{id}."""

from gligabao.api.routes.pending import pending_router

router = pending_router(
    [
        ("DELETE", "/v1/gb/artifacts/<artifact_id>", "forget"),
        ("DELETE", "/v1/gb/entities/<entity_id>", "forget"),
        ("DELETE", "/v1/gb/edges/<edge_id>", "forget"),
    ]
)
