"""The deploy-time migrations (functions/migrate, Custom::Migrations): the reason a failure
reports to CloudFormation never carries the database password."""

from __future__ import annotations

from gligabao.db.deploy_migrations import safe_reason

PASSWORD = "s3cr3t-Pa55word-never-shown"


def test_reasons_never_carry_passwords():
    error = RuntimeError(f"cannot connect: host=db port=5432 user=gb password={PASSWORD} dbname=x")
    error.__cause__ = OSError(f"postgresql://gb:{PASSWORD}@db:5432/x refused")

    reason = safe_reason(error)

    assert PASSWORD not in reason
    assert "RuntimeError" in reason and "OSError" in reason


def test_a_known_password_is_masked_wherever_it_appears():
    reason = safe_reason(RuntimeError(f"the server said: {PASSWORD} is wrong"), [PASSWORD])

    assert PASSWORD not in reason
    assert "***" in reason
