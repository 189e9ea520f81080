"""Lambda function: the remember routes. Glue only; the logic is in the gligabao layer."""

from gligabao.ai.snapstart import preload_on_snapshot, reseed_random_after_restore
from gligabao.api.handler import create_handler
from gligabao.api.routes.remember import router
from gligabao.bootstrap import preload_geo

handler = create_handler(router, operation="remember", idempotent=True)
preload_on_snapshot(preload_geo)
reseed_random_after_restore()
