"""The query's hot statements (keyword, context, and the context as of a time) kept in the database
as PL/pgSQL functions, so that their plans are cached by each database connection whoever the
client is.

Without server-side prepared statements (through RDS Proxy: the `production` profile) PostgreSQL
plans a statement every time it is sent: the keyword statement took 4.0 ms planned each time
against 1.4 ms with the cached plan on a small graph, the context statement 9.1 ms against 3.0
(docs/performance.md, "Plans cached behind RDS Proxy"). A PL/pgSQL function keeps the plans of
its statements for the life of the database connection that runs it, which RDS Proxy keeps open
and shares between clients without pinning anything. The functions run with the caller's rights
(row-level security applies as to the statement) and always with the generic plan, which was as
fast or faster than one planned for the values, at every size measured.

The statement's text stays in Python, where it is composed and tested (db/graph_reads.py); each
function is named after a digest of that text and of its parameters' types, so a changed statement
is a new function, created by a new migration that `make statement-functions` writes, while the
code before it still finds its own. test_statement_functions.py fails while a statement has no
migration of its own or its migration no longer matches it.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass

import psycopg

_PARAMETER = re.compile(r"%\((\w+)\)s")


@dataclass(frozen=True)
class StatementFunction:
    """A statement (psycopg's `%(name)s` parameters) run as the function `function_name`."""

    name: str  # the function's name without its digest
    statement: str
    parameter_types: Mapping[str, str]  # every parameter of the statement, as PostgreSQL infers it

    def __post_init__(self) -> None:
        if list(self.parameter_types) != self.parameters():
            raise ValueError(f"{self.name}: the types must name the statement's parameters in order")

    def parameters(self) -> list[str]:
        """The statement's parameters, in the order of their first use (the function's arguments)."""
        return statement_parameters(self.statement)

    # Derived once: `call` is what every query sends (its digest of the statement, 15 kB for the
    # context statement, took 19 us each time it was asked for).
    @functools.cached_property
    def function_name(self) -> str:
        signature = "\n".join([self.statement, *(f"{k} {v}" for k, v in self.parameter_types.items())])
        return f"{self.name}_{hashlib.sha256(signature.encode()).hexdigest()[:10]}"

    @functools.cached_property
    def call(self) -> str:
        """What the service sends: the function with the statement's parameters, by name."""
        arguments = ", ".join(f"%({name})s::{kind}" for name, kind in self.parameter_types.items())
        return f"SELECT * FROM {self.function_name}({arguments})"

    def body(self) -> str:
        """The statement with its parameters as the function's positional arguments."""
        position = {name: index for index, name in enumerate(self.parameters(), start=1)}
        return _PARAMETER.sub(lambda match: f"${position[match.group(1)]}", self.statement)

    def create(self, columns: list[tuple[str, str]]) -> str:
        """The function's definition, returning `columns` (name, type): the statement's result."""
        arguments = ", ".join(self.parameter_types.values())
        returns = ", ".join(f"{_identifier(name)} {kind}" for name, kind in columns)
        return (
            f"CREATE FUNCTION {self.function_name}({arguments})\n"
            f"RETURNS TABLE ({returns})\n"
            "LANGUAGE plpgsql STABLE\n"
            "SET search_path = public, pg_temp\n"
            "SET plan_cache_mode = force_generic_plan\n"
            "AS $statement$\n"
            "#variable_conflict use_column\n"  # the result's names are the tables' columns too
            "BEGIN\n"
            f"RETURN QUERY {self.body()};\n"
            "END\n"
            "$statement$;\n"
            f"REVOKE ALL ON FUNCTION {self.function_name}({arguments}) FROM PUBLIC;\n"
            f"GRANT EXECUTE ON FUNCTION {self.function_name}({arguments}) TO gligabao_app;\n"
        )


def statement_parameters(statement: str) -> list[str]:
    """The `%(name)s` parameters of `statement`, in the order of their first use."""
    return list(dict.fromkeys(_PARAMETER.findall(statement)))


def _identifier(name: str) -> str:
    return name if re.fullmatch(r"[a-z_][a-z0-9_]*", name) else '"' + name.replace('"', '""') + '"'


def inferred_parameter_types(conn: psycopg.Connection, statement: str) -> dict[str, str]:
    """The type PostgreSQL gives each parameter of `statement` when none is sent with it."""
    names = statement_parameters(statement)
    probe = StatementFunction("probe", statement, dict.fromkeys(names, "unknown"))
    with conn.transaction(force_rollback=True):
        conn.execute(f"PREPARE gb_statement_probe AS {probe.body()}".encode())
        [types] = conn.execute(
            "SELECT parameter_types::text[] FROM pg_prepared_statements WHERE name = 'gb_statement_probe'"
        ).fetchone()
        conn.execute("DEALLOCATE gb_statement_probe")
    return dict(zip(names, types, strict=True))


def result_columns(conn: psycopg.Connection, function: StatementFunction) -> list[tuple[str, str]]:
    """The statement's result columns (name, type), read from a temporary view of it."""
    typed = {name: f"NULL::{kind}" for name, kind in function.parameter_types.items()}
    view = _PARAMETER.sub(lambda match: typed[match.group(1)], function.statement)
    with conn.transaction(force_rollback=True):
        conn.execute(f"CREATE TEMPORARY VIEW gb_statement_probe AS {view}".encode())
        rows = conn.execute(
            """SELECT attname::text, format_type(atttypid, atttypmod) FROM pg_attribute
               WHERE attrelid = 'gb_statement_probe'::regclass AND attnum > 0 ORDER BY attnum"""
        ).fetchall()
    return [(name, kind) for name, kind in rows]


def migration_sql(conn: psycopg.Connection, functions: list[StatementFunction]) -> str:
    """The migration that creates `functions` (their result types read on `conn`'s database)."""
    header = (
        "-- The query's hot statements as functions whose plans each database connection keeps\n"
        "-- (db/statement_functions.py). Written by `make statement-functions` from db/graph_reads.py:\n"
        "-- edit the statements there, never here.\n"
    )
    return header + "".join("\n" + function.create(result_columns(conn, function)) for function in functions)
