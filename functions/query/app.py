"""Lambda function: the query routes. Glue only; the logic is in the gligabao layer."""

from gligabao.ai.clients import preload_on_snapshot
from gligabao.api.app import create_handler
from gligabao.api.routes.query import router
from gligabao.limits import QUERY_MAX_BODY_BYTES

handler = create_handler(router, max_body_bytes=QUERY_MAX_BODY_BYTES)
preload_on_snapshot()
