"""Lambda function: the query routes. Glue only; the logic is in the gligabao layer."""

from gligabao.ai.snapstart import preload_on_snapshot, reseed_random_after_restore
from gligabao.api.handler import create_handler
from gligabao.api.routes.query import router
from gligabao.api.routes.search import router as search_router
from gligabao.bootstrap import preload_geo

handler = create_handler(router, search_router, operation="query")
preload_on_snapshot(preload_geo)
reseed_random_after_restore()
