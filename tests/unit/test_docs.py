"""The documentation: every page of docs/ in the site's navigation, every variable the settings
read in docs/configuration.md, the README within its 250 lines and its links, the picture of the
architecture (the same in the README and on the architecture page, drawn by the site), and the
distribution's name not the package index's other gligabao."""

from __future__ import annotations

import re
import tomllib

import markdown
import yaml
from conftest import ROOT

from gligabao.limits import ENV_PREFIX, Limits
from gligabao.settings import ENVIRONMENT

DOCS = ROOT / "docs"


def nav_pages(entries) -> list[str]:
    pages = []
    for entry in entries:
        for value in entry.values() if isinstance(entry, dict) else [entry]:
            pages.extend(nav_pages(value) if isinstance(value, list) else [value])
    return pages


def test_every_page_of_docs_is_in_the_navigation_and_every_entry_is_a_page():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    pages = nav_pages(config["nav"])

    assert sorted(pages) == sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert len(pages) == len(set(pages))


def test_every_variable_the_settings_read_is_documented():
    documented = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", (DOCS / "configuration.md").read_text()))
    read = {name for name in ENVIRONMENT if name.startswith(ENV_PREFIX)}
    read |= {ENV_PREFIX + field.upper() for field in Limits.model_fields}

    assert len(read) > 100
    assert sorted(read - documented) == []


def test_the_readme_is_at_most_250_lines():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


def test_the_distribution_is_not_the_other_gligabao_and_nothing_tells_to_install_that_one():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == "gligabao-memory"
    assert project["license"] == "Apache-2.0" and "Apache License" in (ROOT / "LICENSE").read_text()

    texts = [ROOT / "README.md", *DOCS.rglob("*.md"), *(ROOT / "layers/core/gligabao").rglob("*.py")]
    advice = re.compile(r"pip install '?gligabao(\[|'|\s|$)")
    assert [str(p.relative_to(ROOT)) for p in texts if advice.search(p.read_text())] == []


def mermaid_blocks(text: str) -> list[str]:
    return re.findall(r"^```mermaid\n(.*?)^```$", text, flags=re.M | re.S)


def test_the_readme_pictures_the_architecture_before_the_explorer_as_the_architecture_page_does():
    readme = (ROOT / "README.md").read_text()
    what_it_is = readme.split("\n## ", 1)[0]
    [diagram] = mermaid_blocks(what_it_is)

    assert what_it_is.index("```mermaid") < what_it_is.index("](docs/explorer.png)")
    assert mermaid_blocks((DOCS / "architecture.md").read_text()) == [diagram]
    assert 12 <= len(diagram.splitlines()) + 2 <= 18


def test_the_picture_shows_what_the_template_deploys():
    [diagram] = mermaid_blocks((DOCS / "architecture.md").read_text())
    template = (ROOT / "template.yaml").read_text()
    shown_and_deployed = {
        "API Gateway": "Type: AWS::Serverless::HttpApi",
        "RDS Proxy": "Type: AWS::RDS::DBProxy",
        "Aurora PostgreSQL 17": 'EngineVersion: "17.',
        "SQS FIFO": "FifoQueue: true",
        "remember worker": "RememberWorkerFunction:",
        "Secrets Manager": "Type: AWS::SecretsManager::Secret",
        "CloudWatch": "Type: AWS::CloudWatch::Dashboard",
        "SigV4 (IAM)": "AWS_IAM",
        "JWT": "JwtAuthorizer",
        "Bedrock": "[anthropic, bedrock, openai]",
    }
    for shown, deployed in shown_and_deployed.items():
        assert shown in diagram and deployed in template, shown


def test_the_site_draws_mermaid_fences_as_material_expects_them():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    names = [next(iter(e)) if isinstance(e, dict) else e for e in config["markdown_extensions"]]
    settings = {k: v for e in config["markdown_extensions"] if isinstance(e, dict) for k, v in e.items()}
    block = "```mermaid\nflowchart LR\n  a --> b\n```\n"

    html = markdown.markdown(block, extensions=names, extension_configs=settings)

    assert html.startswith('<pre class="mermaid"><code>flowchart LR')


def test_every_link_of_the_readme_to_a_file_of_the_repository_finds_it():
    readme = (ROOT / "README.md").read_text()
    targets = {link.split("#")[0] for link in re.findall(r"\]\(([^)]+)\)", readme)}
    local = sorted(t for t in targets if t and "://" not in t)

    assert "docs/api/index.md" in local
    assert [t for t in local if not (ROOT / t).exists()] == []


def test_the_performance_page_is_at_most_5000_words():
    """Its current results only; the history of what was tried is in CHANGELOG.md."""
    assert len((DOCS / "performance.md").read_text().split()) <= 5000


# Modules the benchmarks import (servers, worlds, setup), not benchmarks of their own.
BENCH_SUPPORT = {"bench_setup", "embeddings_server", "sql_round_trips", "tls_proxy"}


def test_every_benchmark_says_in_one_line_what_it_measures_and_has_a_make_target():
    makefile = (ROOT / "Makefile").read_text()
    simple = re.search(r"^SIMPLE_BENCHES := (.*)$", makefile, re.M).group(1).split()  # bench-NAME targets
    for path in sorted((ROOT / "bench").glob("*.py")):
        if path.stem in BENCH_SUPPORT or (
            path.stem.startswith("retrieval_") and path.stem.endswith("_world")
        ):
            continue
        source = path.read_text()
        assert source.startswith('"""') and source.splitlines()[0].rstrip().endswith("."), path.name
        has_target = f"bench/{path.name}" in makefile or path.stem.replace("_", "-") in simple
        assert has_target, f"{path.name} has no make target"
