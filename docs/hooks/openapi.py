"""MkDocs hook: the OpenAPI document generated from the routes into the site, as openapi.json (the
same document as `gligabao openapi` and GET /v1/gb/openapi.json)."""

from __future__ import annotations

import json

from mkdocs.structure.files import File, Files


def openapi_json() -> str:
    from gligabao.api.app import openapi_document
    from gligabao.api.routes import all_routers

    return json.dumps(openapi_document(all_routers()), indent=2) + "\n"


def on_files(files: Files, config, **kwargs) -> Files:
    files.append(File.generated(config, "openapi.json", content=openapi_json()))
    return files
