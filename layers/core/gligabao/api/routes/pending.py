"""Routes whose feature has not landed yet: they answer 501 with {"error": ...}."""

from __future__ import annotations

from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from gligabao.errors import NotImplementedYet


def pending_router(routes: list[tuple[str, str, str]]) -> APIGatewayHttpRouter:
    """A router answering 501 on each (method, path, feature)."""
    router = APIGatewayHttpRouter()
    for method, path, feature in routes:
        router.route(path, method, include_in_schema=False)(_answer_not_implemented(feature))
    return router


def _answer_not_implemented(feature: str):
    def not_implemented() -> dict:
        raise NotImplementedYet(f"{feature} is not implemented yet")

    not_implemented.__name__ = f"{feature}_not_implemented"
    return not_implemented
