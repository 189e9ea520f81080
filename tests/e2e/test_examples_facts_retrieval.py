"""The examples of bring-your-own facts and retrieval only run against the local API (fake
providers), so they cannot rot: examples/bring_your_own_facts.py and examples/retrieval_only.py."""

from __future__ import annotations

import importlib.util
import re

from conftest import ROOT
from remember_helpers import stages_called, use_rule_based_model


def example(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def printed(capsys) -> str:
    """What the example printed (the in-process API's monitoring events, JSON lines, left out)."""
    return "\n".join(line for line in capsys.readouterr().out.splitlines() if not line.startswith("{"))


def test_bring_your_own_facts_runs_with_no_extraction_call_and_cleans_up(
    api, db, fake_anthropic, fake_openai, capsys
):
    use_rule_based_model(fake_anthropic)

    example("bring_your_own_facts").main(api.base_url)

    out = printed(capsys)
    assert "stored  [edge 1] Alice works_at Acme (from 2023-01-01T00:00:00Z)" in out
    assert re.search(r"^known   Alice is entity \d+, created now: False$", out, re.MULTILINE)
    assert "closed  [edge 2] no longer holds from 2025-01-31T00:00:00Z" in out
    assert "of kind facts: " in out
    assert 'refused 400: facts: edges.0.source: "Eve" is not one of the entities' in out
    assert stages_called(fake_anthropic) == ["resolve"]  # the second import, against the first
    assert db.execute("SELECT count(*) FROM gb_datasets").fetchone()[0] == 0


def test_retrieval_only_prints_a_prompt_of_the_context_with_no_llm_call_for_it(
    api, db, fake_anthropic, fake_openai, capsys
):
    use_rule_based_model(fake_anthropic)

    example("retrieval_only").main(api.base_url)

    out = printed(capsys)
    assert re.search(r"^entity  \[\d+\] Alice \(person\)$", out, re.MULTILINE)
    assert re.search(r"^edge    \[\d+\] Alice works_at Acme$", out, re.MULTILINE)
    assert re.search(r"<graph>\n(\[entity \d+\] .*\n)*\[entity \d+\] Alice \(person\): engineer\n", out)
    assert out.rstrip().endswith("Question: Where does Alice work?")
    assert stages_called(fake_anthropic) == ["extract"]  # the remember's; none for the context
    assert len(fake_openai.embedding_requests) == 2  # the remember's, the question's
    assert db.execute("SELECT count(*) FROM gb_datasets").fetchone()[0] == 0


def test_search_and_facts_prints_scored_filtered_facts_and_their_provenance_with_no_llm_call_for_them(
    api, db, fake_anthropic, fake_openai, capsys
):
    use_rule_based_model(fake_anthropic)

    example("search_and_facts").main(api.base_url)

    out = printed(capsys)
    assert re.search(r"^found   \[\d+\] Alice works_at Acme -?\d\.\d\d \[.*'keyword'.*\]$", out, re.MULTILINE)
    assert re.search(r"^found   \[\d+\] Alice lives_in Paris ", out, re.MULTILINE)
    assert re.search(r"^crm     Alice works_at Acme$", out, re.MULTILINE)
    assert re.search(r"^fact    \[\d+\] from artifacts \[\d+\], sessions \['call-1'\]$", out, re.MULTILINE)
    assert "labels  {'source': 'crm', 'account': 42}" in out
    assert re.search(r"^listed  \[\d+\] Alice lives_in Paris$", out, re.MULTILINE)
    assert stages_called(fake_anthropic) == ["extract", "extract", "resolve"]  # the remembers' only
    assert len(fake_openai.embedding_requests) == 4  # two remembers, two searches
    assert db.execute("SELECT count(*) FROM gb_datasets").fetchone()[0] == 0
