"""Which database role connects (row-level security, migration 0003): the service as gligabao_app,
held by the policies; only the migrations as the tables' owner."""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest
from moto import mock_aws
from psycopg.conninfo import conninfo_to_dict

from gligabao.bootstrap import database_url
from gligabao.db.deploy_migrations import safe_reason
from gligabao.db.migrate import APP_ROLE
from gligabao.settings import Settings

MASTER_PASSWORD = "master-password-0123456789"
APP_PASSWORD = "app-password-0123456789"


@pytest.fixture
def secrets(aws_env):
    with mock_aws():
        client = boto3.client("secretsmanager", region_name="us-east-1")
        master = client.create_secret(
            Name="gligabao/database",
            SecretString=json.dumps(
                {"username": "gligabao_admin", "password": MASTER_PASSWORD, "host": "cluster.example"}
            ),
        )["ARN"]
        app = client.create_secret(
            Name="gligabao/database-app",
            SecretString=json.dumps({"username": APP_ROLE, "password": APP_PASSWORD}),
        )["ARN"]
        yield master, app


def test_on_lambda_the_service_connects_through_the_proxy_as_its_own_role(secrets):
    master, app = secrets
    settings = Settings(db_secret_arn=master, db_app_secret_arn=app, db_host="proxy.example", db_name="gb")

    url = conninfo_to_dict(database_url(settings))

    assert url["user"] == APP_ROLE and url["password"] == APP_PASSWORD
    assert url["host"] == "proxy.example" and url["dbname"] == "gb"
    assert settings.behind_rds_proxy


def test_on_lambda_tls_verifies_the_proxy_s_certificate_against_amazon_s_public_roots(secrets):
    master, app = secrets
    for admin in (False, True):
        settings = Settings(db_secret_arn=master, db_app_secret_arn=app, db_host="proxy.example")

        url = conninfo_to_dict(database_url(settings, admin=admin))

        assert url["sslmode"] == "verify-full"
        bundle = Path(url["sslrootcert"]).read_text()
        # RDS Proxy's ACM certificates chain to Amazon Trust Services' roots
        for root in ("Amazon Root CA 1", "Amazon Root CA 2", "Amazon Root CA 3", "Amazon Root CA 4"):
            assert f'# Label: "{root}"' in bundle, root


def test_without_the_proxy_tls_verifies_the_cluster_s_certificate_against_amazon_rds_authorities(secrets):
    """GB_DB_CA=rds (the template's development profile): Aurora's own certificate chains to RDS's
    regional authorities, which certifi does not hold."""
    from cryptography import x509

    master, app = secrets
    for admin in (False, True):
        settings = Settings(
            db_secret_arn=master, db_app_secret_arn=app, db_host="cluster.example", db_ca="rds"
        )

        url = conninfo_to_dict(database_url(settings, admin=admin))

        assert url["sslmode"] == "verify-full"
        authorities = x509.load_pem_x509_certificates(Path(url["sslrootcert"]).read_bytes())
        names = {c.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)[0].value for c in authorities}
        for kind in ("RSA2048 G1", "RSA4096 G1", "ECC384 G1"):  # rds-ca-rsa2048-g1 is the default
            assert f"Amazon RDS us-east-1 Root CA {kind}" in names, kind
    assert Settings.from_env({"GB_DB_CA": "rds"}).db_ca == "rds"
    assert Settings().db_ca == "public"


def test_on_lambda_the_migrations_connect_as_the_master_user(secrets):
    master, app = secrets
    settings = Settings(db_secret_arn=master, db_app_secret_arn=app, db_host="proxy.example")

    url = conninfo_to_dict(database_url(settings, admin=True))

    assert url["user"] == "gligabao_admin" and url["password"] == MASTER_PASSWORD
    assert url["host"] == "proxy.example"


def test_database_url_is_the_services_and_the_migration_url_the_owners():
    settings = Settings(
        database_url="postgresql://gligabao_app@db/gb", migration_database_url="postgresql://owner@db/gb"
    )

    assert database_url(settings) == "postgresql://gligabao_app@db/gb"
    assert database_url(settings, admin=True) == "postgresql://owner@db/gb"


def test_without_a_migration_url_database_url_migrates_too():
    settings = Settings(database_url="postgresql://someone@db/gb")

    assert database_url(settings, admin=True) == "postgresql://someone@db/gb"


def test_the_migration_url_is_read_from_its_variable():
    settings = Settings.from_env(
        {
            "DATABASE_URL": "postgresql://gligabao_app@db/gb",
            "GB_MIGRATION_DATABASE_URL": "postgresql://o@db/gb",
        }
    )

    assert settings.migration_database_url == "postgresql://o@db/gb"
    assert settings.database_url == "postgresql://gligabao_app@db/gb"


def test_a_failed_migration_reason_never_shows_the_app_password():
    reason = safe_reason(RuntimeError(f"ALTER ROLE failed near '{APP_PASSWORD}'"), [APP_PASSWORD])

    assert APP_PASSWORD not in reason
