"""Lambda function: the remember routes. Glue only; the logic is in the gligabao layer."""

from gligabao.api.handler import create_handler
from gligabao.api.routes.remember import router

handler = create_handler(router, operation="remember", idempotent=True)
