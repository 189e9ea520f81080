"""One router per route group; each Lambda function serves one group."""

from __future__ import annotations

from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter


def all_routers() -> list[APIGatewayHttpRouter]:
    from gligabao.api.routes import (
        datasets,
        edges,
        forget,
        graph,
        query,
        remember,
        search,
        sessions,
        system,
        trajectories,
    )

    return [
        system.router,
        datasets.router,
        remember.router,
        query.router,
        search.router,
        graph.router,
        sessions.router,
        edges.router,
        forget.router,
        trajectories.router,
    ]
