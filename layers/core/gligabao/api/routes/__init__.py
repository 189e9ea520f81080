"""One router per route group; each Lambda function serves one group."""

from __future__ import annotations

from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter


def all_routers() -> list[APIGatewayHttpRouter]:
    from gligabao.api.routes import (
        datasets,
        edge_corrections,
        edges,
        forget,
        graph,
        ontologies,
        query,
        remember,
        search,
        sessions,
        system,
        timeseries,
        trajectories,
    )

    return [
        system.router,
        datasets.router,
        ontologies.router,
        remember.router,
        query.router,
        search.router,
        graph.router,
        sessions.router,
        edges.router,
        timeseries.router,
        forget.router,
        edge_corrections.router,
        trajectories.router,
    ]
