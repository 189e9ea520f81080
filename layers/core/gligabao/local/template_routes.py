"""The routes of template.yaml: which function serves which HttpApi path and method."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

DEFAULT_ROUTE = "$default"


@dataclass(frozen=True)
class Route:
    method: str  # GET, POST, ... or ANY
    path: str  # the template's path, e.g. /v1/gb/datasets/{dataset}, or $default
    function: str  # logical id
    code_uri: Path
    handler: str  # module.function, e.g. app.handler

    @property
    def pattern(self) -> re.Pattern:
        return _path_pattern(self.path)

    def match(self, path: str) -> dict[str, str] | None:
        if self.path == DEFAULT_ROUTE:
            return None
        found = self.pattern.fullmatch(path)
        return found.groupdict() if found else None


@functools.cache  # a template's few dozen paths, matched on every request
def _path_pattern(template_path: str) -> re.Pattern:
    regex, position = "", 0
    for param in re.finditer(r"\{([A-Za-z0-9_]+)(\+?)\}", template_path):
        regex += re.escape(template_path[position : param.start()])
        regex += f"(?P<{param.group(1)}>.+)" if param.group(2) else f"(?P<{param.group(1)}>[^/]+)"
        position = param.end()
    return re.compile(regex + re.escape(template_path[position:]))


def load_template(path: Path) -> dict:
    """The template as data; the short intrinsic tags (!Ref, !GetAtt, !Sub, ...) read as their long forms."""
    import yaml

    class CloudFormationLoader(yaml.SafeLoader):
        pass

    def intrinsic(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict:
        if isinstance(node, yaml.ScalarNode):
            value = loader.construct_scalar(node)
            if suffix == "GetAtt":
                value = value.split(".", 1)
        elif isinstance(node, yaml.SequenceNode):
            value = loader.construct_sequence(node, deep=True)
        else:
            value = loader.construct_mapping(node, deep=True)
        return {"Ref" if suffix == "Ref" else f"Fn::{suffix}": value}

    CloudFormationLoader.add_multi_constructor("!", intrinsic)
    with open(path, encoding="utf-8") as stream:
        return yaml.load(stream, Loader=CloudFormationLoader)


def routes_from_template(path: Path) -> list[Route]:
    template = load_template(path)
    base = path.parent
    globals_ = (template.get("Globals") or {}).get("Function") or {}
    routes = []
    for logical_id, resource in (template.get("Resources") or {}).items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        props = resource.get("Properties") or {}
        code_uri = props.get("CodeUri", globals_.get("CodeUri"))
        handler = props.get("Handler", globals_.get("Handler"))
        for event in (props.get("Events") or {}).values():
            if event.get("Type") != "HttpApi":
                continue
            event_props = event.get("Properties") or {}
            routes.append(
                Route(
                    method=str(event_props.get("Method", "ANY")).upper(),
                    path=event_props.get("Path", DEFAULT_ROUTE),
                    function=logical_id,
                    code_uri=(base / code_uri).resolve(),
                    handler=handler,
                )
            )
    return routes


def queue_worker(path: Path) -> tuple[str, Path, str] | None:
    """The function the template gives an SQS event (the remember worker): its logical id, code
    directory and handler; None when there is none."""
    template = load_template(path)
    globals_ = (template.get("Globals") or {}).get("Function") or {}
    for logical_id, resource in (template.get("Resources") or {}).items():
        props = resource.get("Properties") or {}
        if resource.get("Type") == "AWS::Serverless::Function" and any(
            event.get("Type") == "SQS" for event in (props.get("Events") or {}).values()
        ):
            code_uri = props.get("CodeUri", globals_.get("CodeUri"))
            return (
                logical_id,
                (path.parent / code_uri).resolve(),
                props.get("Handler", globals_.get("Handler")),
            )
    return None
