"""Lambda function: the query routes. Glue only; the logic is in the gligabao layer."""

from gligabao.api.handler import create_handler
from gligabao.api.routes.query import router
from gligabao.api.routes.search import router as search_router

handler = create_handler(router, search_router, operation="query")
