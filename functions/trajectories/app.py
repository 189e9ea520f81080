"""Lambda function: the eval trajectories routes. Glue only; the logic is in the gligabao layer."""

from gligabao.api.handler import create_handler
from gligabao.api.routes.trajectories import router

handler = create_handler(router)
