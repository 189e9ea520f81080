"""Lambda function: the datasets and ontology routes. Glue only; the logic is in the gligabao layer."""

from gligabao.api.handler import create_handler
from gligabao.api.routes import datasets, ontologies

# idempotent: POST /v1/gb/ontologies with an Idempotency-Key runs once.
handler = create_handler(datasets.router, ontologies.router, idempotent=True)
