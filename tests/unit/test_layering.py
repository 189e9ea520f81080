"""The package's layering, read from its source: no import cycle, and each layer imports only what
it may (handlers -> api -> memory -> db, ai, observability; the bootstrap wires them)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "layers" / "core" / "gligabao"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def imports_of(module: str) -> set[str]:
    """Every module this one imports, at module level, inside a function or for type checking only
    (a type two modules share belongs in a module both import): gligabao modules by their full
    name, third-party ones by their top-level package."""
    return imports_in(MODULES[module].read_text())


def imports_in(source: str) -> set[str]:
    tree = ast.parse(source)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            # `from gligabao.api import deps` imports the module gligabao.api.deps
            found.update(
                f"{node.module}.{alias.name}"
                for alias in node.names
                if f"{node.module}.{alias.name}" in MODULES
            )
    return {name if name in MODULES else name.split(".")[0] for name in found}


GRAPH = {module: imports_of(module) & MODULES.keys() for module in MODULES}


def cycles() -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in GRAPH[module]:
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(GRAPH):
        if module not in index:
            visit(module)
    return found


def test_the_graph_is_read_from_the_source():
    assert "gligabao.memory.remember" in GRAPH
    assert "gligabao.db.graph_writes" in GRAPH["gligabao.memory.remember"]


def test_an_import_for_type_checking_only_is_an_edge_too():
    source = (
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from gligabao.memory.query import Answer\n"
    )
    assert "gligabao.memory.query" in imports_in(source)


def test_there_is_no_import_cycle_in_the_package():
    assert cycles() == []


def _in(module: str, *layers: str) -> bool:
    return any(module == f"gligabao.{layer}" or module.startswith(f"gligabao.{layer}.") for layer in layers)


# layer -> what its modules must never import (gligabao layers, or third-party top-level packages)
FORBIDDEN = {
    "memory": ("api", "local", "bootstrap", "aws", "boto3", "botocore", "aws_lambda_powertools"),
    "db": ("api", "memory", "local", "bootstrap", "ai"),
    "ai": ("api", "memory", "db", "local", "bootstrap"),
    "observability": ("api", "memory", "db", "local", "bootstrap", "ai"),
    "geo": ("api", "memory", "db", "local", "bootstrap", "ai", "aws", "boto3", "botocore"),
    "model": ("gligabao",),
    "limits": ("gligabao.settings", "gligabao.bootstrap"),
    "settings": ("gligabao.bootstrap", "api", "memory", "db", "ai"),
    # The client speaks HTTP to the API and reads its answers with the API's response models only.
    "client": (
        "memory",
        "db",
        "ai",
        "local",
        "bootstrap",
        "aws",
        "settings",
        "observability",
        "gligabao.api.deps",
        "gligabao.api.app",
        "gligabao.api.routes",
        "gligabao.api.handler",
        "aws_lambda_powertools",
        "boto3",
        "psycopg",
    ),
    # The eval command is a client of the API: over HTTP, never through the service's insides.
    "evals": ("api", "memory", "db", "local"),
    # the explorer only talks to the API over HTTP, like any client
    "explore": ("api", "memory", "db", "ai", "bootstrap", "observability", "aws", "geo"),
}


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_each_layer_imports_only_what_it_may(layer):
    offending = []
    for module, imported in ((m, imports_of(m)) for m in MODULES if _in(m, layer)):
        for name in imported:
            for rule in FORBIDDEN[layer]:
                forbidden = (
                    name == rule or name.startswith(rule + ".")
                    if rule.startswith("gligabao")
                    else _in(name, rule) or name == rule
                )
                if forbidden and name != module:
                    offending.append(f"{module} imports {name}")
    assert offending == []


def test_no_import_runs_back_up_the_layers_even_for_type_checking():
    """The ai layer renders what memory retrieved through a Protocol of its own, not memory's types."""
    source = (PACKAGE / "ai" / "prompts" / "query.py").read_text()
    assert "gligabao.memory" not in source


def test_only_the_settings_read_the_environment():
    readers = [
        module
        for module, path in MODULES.items()
        if "os.environ" in path.read_text() or "getenv(" in path.read_text()
    ]
    assert readers == ["gligabao.settings"]


def test_only_the_command_line_imports_the_eval_command():
    importers = sorted(
        module
        for module in MODULES
        if not _in(module, "evals") and any(_in(n, "evals") for n in imports_of(module))
    )
    assert importers == ["gligabao.local.cli"]


def test_only_the_local_runtime_verifies_tokens_the_layer_needs_no_pyjwt():
    # On Lambda, API Gateway validates the tokens: PyJWT is the local API's (the `local` extra).
    importers = sorted(module for module in MODULES if "jwt" in imports_of(module))
    assert importers == ["gligabao.local.jwt_authorizer"]
    requirements = (PACKAGE.parent / "requirements.txt").read_text().lower()
    assert "jwt" not in requirements
