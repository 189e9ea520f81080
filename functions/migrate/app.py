"""Lambda function: the deploy-time schema migrations (CloudFormation custom resource
Custom::Migrations), and the rotation of the service role's secret (the Secrets Manager rotation
function of DatabaseAppSecret). Glue only; the logic is in gligabao.db.deploy_migrations and
gligabao.aws.rotation."""

from aws_lambda_powertools import Logger, Tracer

from gligabao.aws.rotation import is_rotation_event, serve_rotation
from gligabao.db.deploy_migrations import handle

logger = Logger()  # service name from POWERTOOLS_SERVICE_NAME
tracer = Tracer()


@logger.inject_lambda_context(log_event=False)  # the event holds a pre-signed URL: not logged
@tracer.capture_lambda_handler(capture_response=False)
def handler(event, context):
    # Imported here: a broken configuration must still be answered (FAILED), never a silence.
    from gligabao import bootstrap

    if is_rotation_event(event):
        return serve_rotation(
            event, logger=logger, step=bootstrap.rotate_app_secret, passwords=bootstrap.database_passwords
        )
    return handle(
        event, context, logger=logger, apply=bootstrap.migrate_schema, passwords=bootstrap.database_passwords
    )
