"""Lambda function: the correction of facts by hand. Glue only; the logic is in the gligabao layer."""

from gligabao.api.handler import create_handler
from gligabao.api.routes.edge_corrections import router

handler = create_handler(router, idempotent=True, idempotent_method="PATCH")
