"""Lambda function: the query routes. Glue only; the logic is in the gligabao layer."""

from gligabao.api.handler import create_handler
from gligabao.api.routes.query import router

handler = create_handler(router, operation="query")
