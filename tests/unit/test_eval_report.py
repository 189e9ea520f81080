"""The report: percentiles, the Markdown, and the PNG charts (matplotlib's Agg backend)."""

from __future__ import annotations

import json

from gligabao.evals.report import (
    ACCURACY_CHART,
    LATENCY_CHART,
    REPORT_JSON,
    REPORT_MARKDOWN,
    build_report,
    percentile,
    render_markdown,
    write_report,
)
from gligabao.evals.suite import parse_suite

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

SUITE = parse_suite(
    [
        json.dumps({"type": "remember", "id": "r1", "text": "Alice works at Acme."}),
        json.dumps(
            {"type": "question", "id": "q1", "category": "temporal", "question": "Work?", "answer": "Acme"}
        ),
        json.dumps(
            {"type": "question", "id": "q2", "category": "paraphrase", "question": "Job?", "answer": "Acme"}
        ),
        json.dumps(
            {"type": "question", "id": "q3", "category": "paraphrase", "question": "Boss?", "answer": "Bo"}
        ),
    ]
)
RUN = {"suite": "s.jsonl", "api": "http://api", "user_id": "eval-1", "started_at": "2026-01-01T00:00:00Z"}
RESULTS = {
    "r1": {
        "id": "r1",
        "type": "remember",
        "ok": True,
        "answered": True,
        "latency_ms": 900.0,
        "prompt_tokens": 10,
    },
    "q1": {
        "id": "q1",
        "type": "question",
        "category": "temporal",
        "ok": True,
        "answered": True,
        "correct": True,
        "contains": True,
        "answer": "Acme",
        "latency_ms": 100.0,
        "judge": {"reason": "same", "cost_usd": 0.001},
    },
    "q2": {
        "id": "q2",
        "type": "question",
        "category": "paraphrase",
        "ok": False,
        "status": 502,
        "error": "x|y",
    },
}


def test_percentiles_interpolate_between_ranks():
    assert percentile([100, 200, 300, 400], 0.5) == 250.0
    assert percentile([100, 200, 300, 400], 0.95) == 385.0
    assert percentile([7], 0.95) == 7.0
    assert percentile([], 0.5) is None


def test_an_unfinished_run_is_reported_as_incomplete_with_its_failures():
    report = build_report(SUITE, RUN, RESULTS)

    assert not report["complete"]
    assert report["accuracy"]["paraphrase"] == {
        "questions": 1,
        "failed": 1,
        "correct": 0,
        "accuracy": 0.0,
        "exact": 0.0,
        "contains": 0.0,
    }
    assert report["failures"] == [{"id": "q2", "type": "question", "status": 502, "error": "x|y"}]
    markdown = render_markdown(report)
    assert "INCOMPLETE" in markdown
    assert "| q2 | question | 502 | x\\|y |" in markdown
    assert "| **overall** | 2 | 1 | 1 | 50.0% | 0.0% | 50.0% |" in markdown


def test_the_folder_gets_the_json_the_markdown_and_two_png_charts(tmp_path):
    report = build_report(SUITE, RUN, RESULTS)
    write_report(tmp_path, report)

    assert json.loads((tmp_path / REPORT_JSON).read_text())["accuracy"]["temporal"]["accuracy"] == 1.0
    assert f"![accuracy]({ACCURACY_CHART})" in (tmp_path / REPORT_MARKDOWN).read_text()
    for chart in (ACCURACY_CHART, LATENCY_CHART):
        assert (tmp_path / chart).read_bytes().startswith(PNG_SIGNATURE)
