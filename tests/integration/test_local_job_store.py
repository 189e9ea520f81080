"""The local job queue's store is bound to its database: one made again under the same name and in
the same place gets a store of its own, so it never runs the old database's jobs."""

from __future__ import annotations

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from gligabao.local.cli import database_identity


def test_a_database_made_again_under_its_name_has_another_identity(admin_database_url):
    name = "gligabao_identity_probe"
    url = make_conninfo(**{**conninfo_to_dict(admin_database_url), "dbname": name})

    def create_again() -> None:
        with psycopg.connect(admin_database_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))

    try:
        create_again()
        first = database_identity(url)
        assert first and first == database_identity(url)
        create_again()
        assert database_identity(url) not in ("", first)
    finally:
        with psycopg.connect(admin_database_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def test_a_server_that_will_not_say_gives_no_identity():
    assert database_identity("postgresql://nobody@127.0.0.1:1/none?connect_timeout=1") == ""
