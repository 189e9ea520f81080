"""The inference an offline call records: like a provider's, with no tokens and no cost."""

from __future__ import annotations

import time

from gligabao.observability.inferences import Inference


def offline_inference(
    stage: str, model: str, reasoning: str | None, started: float, error: str | None = None
) -> Inference:
    """`started`: the call's time.monotonic() at its start."""
    return Inference(
        stage=stage,
        model=model,
        reasoning=reasoning,
        input_tokens=0,
        output_tokens=0,
        thinking_tokens=None,
        cost_usd=0.0,
        duration_ms=round((time.monotonic() - started) * 1000),
        ok=error is None,
        error=error,
    )
