"""The report of a run, from its results: report.json, report.md and the charts.

Accuracy is over every question of the suite that was run: a failed one (the API's error, the
judge's) counts as not correct, never as absent. `accuracy` is the judge's; `exact` and
`contains` are the string scores (scoring.py). Tokens and cost: the service's, from each call's
trajectory (`final_metrics`), by operation; the judge's own apart.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gligabao.evals.suite import Suite
from gligabao.timefmt import rfc3339

REPORT_JSON = "report.json"
REPORT_MARKDOWN = "report.md"
ACCURACY_CHART = "accuracy.png"
LATENCY_CHART = "latency.png"
OVERALL = "overall"


def percentile(values: Sequence[float], fraction: float) -> float | None:
    """Linear interpolation between the closest ranks (numpy's default); None without values."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * fraction
    low, high = math.floor(position), math.ceil(position)
    return round(ordered[low] + (ordered[high] - ordered[low]) * (position - low), 1)


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _tally(results: Iterable[dict[str, Any]]) -> dict[str, Any]:
    results = list(results)
    total = len(results)
    correct = sum(1 for r in results if r.get("correct"))
    exact = sum(1 for r in results if r.get("exact"))
    contains = sum(1 for r in results if r.get("contains"))
    return {
        "questions": total,
        "failed": sum(1 for r in results if not r.get("ok")),
        "correct": correct,
        "accuracy": _ratio(correct, total),
        "exact": _ratio(exact, total),
        "contains": _ratio(contains, total),
    }


def _usage(results: Iterable[dict[str, Any]]) -> dict[str, Any]:
    results = list(results)
    return {
        "calls": len(results),
        "prompt_tokens": sum(r.get("prompt_tokens") or 0 for r in results),
        "completion_tokens": sum(r.get("completion_tokens") or 0 for r in results),
        "cost_usd": round(sum(r.get("cost_usd") or 0.0 for r in results), 8),
    }


def _latency(results: Iterable[dict[str, Any]]) -> dict[str, Any]:
    # Answered calls only: a failure's time says how long the API took to fail.
    values = [r["latency_ms"] for r in results if r.get("answered") and r.get("latency_ms") is not None]
    return {"calls": len(values), "p50_ms": percentile(values, 0.50), "p95_ms": percentile(values, 0.95)}


def build_report(suite: Suite, run: dict[str, Any], results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    remembers = [results[item.id] for item in suite.remembers if item.id in results]
    questions = [results[item.id] for item in suite.questions if item.id in results]
    # A question answered but not judged still had its query: its latency and tokens count.
    queried = [r for r in questions if r.get("answered")]
    categories = sorted({item.category for item in suite.questions})
    judged = [r["judge"] for r in questions if isinstance(r.get("judge"), dict)]
    service = _usage(remembers + queried)
    judge_usage = {
        "calls": len(judged),
        "prompt_tokens": sum(j.get("prompt_tokens") or 0 for j in judged),
        "completion_tokens": sum(j.get("completion_tokens") or 0 for j in judged),
        "cost_usd": round(sum(j.get("cost_usd") or 0.0 for j in judged), 8),
    }
    return {
        "suite": run.get("suite"),
        "api": run.get("api"),
        "user_id": run.get("user_id"),
        "dataset_prefix": run.get("dataset_prefix"),
        "started_at": run.get("started_at"),
        "generated_at": rfc3339(datetime.now(UTC)),
        "complete": len(remembers) + len(questions) == len(suite.items),
        "remembers": {
            "total": len(suite.remembers),
            "run": len(remembers),
            "failed": sum(1 for r in remembers if not r.get("ok")),
        },
        "accuracy": {
            OVERALL: _tally(questions),
            **{c: _tally(r for r in questions if r.get("category") == c) for c in categories},
        },
        "usage": {
            "remember": _usage(remembers),
            "query": _usage(queried),
            "service": service,
            "judge": judge_usage,
            "total_cost_usd": round(service["cost_usd"] + judge_usage["cost_usd"], 8),
        },
        "latency": {"remember": _latency(remembers), "query": _latency(queried)},
        "failures": [
            {key: r.get(key) for key in ("id", "type", "status", "error")}
            for r in remembers + questions
            if not r.get("ok")
        ],
        "questions": [
            {
                key: r.get(key)
                for key in (
                    "id",
                    "category",
                    "question",
                    "expected",
                    "answer",
                    "correct",
                    "exact",
                    "contains",
                    "ok",
                    "latency_ms",
                    "trajectory_file",
                )
            }
            | {"reason": (r.get("judge") or {}).get("reason")}
            for r in questions
        ],
    }


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _number(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:,.1f}{unit}"


def render_markdown(report: dict[str, Any]) -> str:
    remembers = report["remembers"]
    usage = report["usage"]
    lines = [
        "# gligabao eval",
        "",
        f"Suite `{report['suite']}` against `{report['api']}` ({_whose(report)}), "
        f"started {report['started_at']}, report of {report['generated_at']}"
        + ("." if report["complete"] else " - INCOMPLETE: rerun the same command to finish."),
        "",
        f"Remembers: {remembers['run']} of {remembers['total']} run, {remembers['failed']} failed.",
        "",
        "## Accuracy",
        "",
        "| category | questions | failed | correct | accuracy (judge) | exact | contains |",
        "| - | -: | -: | -: | -: | -: | -: |",
    ]
    for name, tally in report["accuracy"].items():
        label = f"**{name}**" if name == OVERALL else name
        lines.append(
            f"| {label} | {tally['questions']} | {tally['failed']} | {tally['correct']} | "
            f"{_percent(tally['accuracy'])} | {_percent(tally['exact'])} | {_percent(tally['contains'])} |"
        )
    lines += [
        "",
        f"![accuracy]({ACCURACY_CHART})",
        "",
        "## Latency (client side, answered calls)",
        "",
        "| call | calls | p50 | p95 |",
        "| - | -: | -: | -: |",
    ]
    for name, latency in report["latency"].items():
        lines.append(
            f"| {name} | {latency['calls']} | {_number(latency['p50_ms'], ' ms')} | "
            f"{_number(latency['p95_ms'], ' ms')} |"
        )
    lines += [
        "",
        f"![latency]({LATENCY_CHART})",
        "",
        "## Tokens and cost",
        "",
        "| calls of | calls | prompt tokens | completion tokens | cost (USD) |",
        "| - | -: | -: | -: | -: |",
    ]
    for name in ("remember", "query", "service", "judge"):
        part = usage[name]
        lines.append(
            f"| {name} | {part['calls']} | {part['prompt_tokens']:,} | {part['completion_tokens']:,} | "
            f"{part['cost_usd']:.4f} |"
        )
    lines += ["", f"Total cost: {usage['total_cost_usd']:.4f} USD (service and judge).", ""]
    if report["failures"]:
        lines += ["## Failures", "", "| item | call | status | error |", "| - | - | - | - |"]
        for failure in report["failures"]:
            error = (failure["error"] or "").replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {failure['id']} | {failure['type']} | {failure['status'] or '-'} | {error} |")
        lines.append("")
    lines += ["## Answers", "", "| item | category | verdict | expected | answer |", "| - | - | - | - | - |"]
    for question in report["questions"]:
        verdict = "failed" if not question["ok"] else ("right" if question["correct"] else "wrong")
        cells = [_cell(question["expected"]), _cell(question["answer"])]
        lines.append(f"| {question['id']} | {question['category']} | {verdict} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines) + "\n"


def _whose(report: dict[str, Any]) -> str:
    if report.get("user_id"):
        return f"user `{report['user_id']}`"
    return f"the token's user, datasets `{report.get('dataset_prefix')}*`"


def _cell(text: str | None, limit: int = 160) -> str:
    text = (text or "").replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def write_report(out: Path, report: dict[str, Any]) -> None:
    from gligabao.evals.charts import accuracy_chart, latency_chart

    (out / REPORT_JSON).write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    (out / REPORT_MARKDOWN).write_text(render_markdown(report), encoding="utf-8")
    accuracy_chart(report, out / ACCURACY_CHART)
    latency_chart(report, out / LATENCY_CHART)
