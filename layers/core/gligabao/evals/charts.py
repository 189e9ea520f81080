"""The report's charts, PNG files drawn with matplotlib's Agg backend (no display needed).

A `Figure` with its own Agg canvas, never pyplot: no global state, nothing left open between
charts, safe beside the run's threads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

CHART_DPI = 110


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=CHART_DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def accuracy_chart(report: dict[str, Any], path: Path) -> None:
    """Accuracy per category (the judge's, with the contains score beside it), overall first."""
    names = list(report["accuracy"])
    judged = [(report["accuracy"][name]["accuracy"] or 0.0) * 100 for name in names]
    contains = [(report["accuracy"][name]["contains"] or 0.0) * 100 for name in names]
    counts = [report["accuracy"][name]["questions"] for name in names]
    figure = _figure(max(6.0, 1.1 * len(names) + 2), 4.5)
    axes = figure.add_subplot()
    positions = list(range(len(names)))
    width = 0.4
    bars = axes.bar([p - width / 2 for p in positions], judged, width, label="judge", color="#3b6ea5")
    axes.bar([p + width / 2 for p in positions], contains, width, label="contains", color="#b0c4de")
    for bar, value in zip(bars, judged, strict=True):
        axes.annotate(
            f"{value:.0f}%",
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    axes.set_xticks(positions, [f"{n}\n({c})" for n, c in zip(names, counts, strict=True)], fontsize=8)
    axes.set_ylim(0, 110)
    axes.set_ylabel("accuracy (%)")
    axes.set_title("Accuracy per category (questions)")
    axes.legend(loc="upper right", fontsize=8)
    figure.savefig(path)


def latency_chart(report: dict[str, Any], path: Path) -> None:
    """p50 and p95 of remember and query, in milliseconds."""
    calls = list(report["latency"])
    figure = _figure(6.0, 4.0)
    axes = figure.add_subplot()
    positions = list(range(len(calls)))
    width = 0.35
    for offset, key, color in ((-width / 2, "p50_ms", "#3b6ea5"), (width / 2, "p95_ms", "#d98c3f")):
        values = [report["latency"][call][key] or 0.0 for call in calls]
        bars = axes.bar([p + offset for p in positions], values, width, label=key[:3], color=color)
        for bar, value in zip(bars, values, strict=True):
            axes.annotate(
                f"{value:,.0f}",
                (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                ha="center",
                va="bottom",
                fontsize=8,
            )
    axes.set_xticks(positions, [f"{c}\n({report['latency'][c]['calls']} calls)" for c in calls])
    axes.set_ylabel("latency (ms)")
    axes.set_title("Latency of the API's calls")
    axes.legend(fontsize=8)
    figure.savefig(path)
