"""The database side of the service role's password rotation (gligabao.aws.rotation): the role's
password set as the tables' owner, and a login as the role checked."""

from __future__ import annotations

from collections.abc import Callable

import psycopg

from gligabao.db.connection import CONNECT_TIMEOUT_SECONDS, Database
from gligabao.db.migrate import set_role_password


class DatabaseRolePasswords:
    """`admin`: units of work as the tables' owner; `login_url(role, password)`: a URL that
    reaches the database itself as that role (not RDS Proxy, which knows only the secret's
    current password)."""

    def __init__(self, admin: Database, login_url: Callable[[str, str], str]):
        self._admin = admin
        self._login_url = login_url

    def set_password(self, role: str, password: str) -> None:
        set_role_password(self._admin.connection(), password, role)

    def check_login(self, role: str, password: str) -> None:
        url = self._login_url(role, password)
        with psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS) as conn:
            conn.execute("SELECT 1")

    def close(self) -> None:
        self._admin.close()
