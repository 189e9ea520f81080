"""Lambda function: the sessions routes. Glue only; the logic is in the gligabao layer."""

from gligabao.api.handler import create_handler
from gligabao.api.routes.edges import router as edges_router
from gligabao.api.routes.sessions import router
from gligabao.api.routes.timeseries import router as timeseries_router

handler = create_handler(router, edges_router, timeseries_router)
