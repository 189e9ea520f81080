"""A window's texts are judged by one resolve reply: a window of fact-dense texts is cut where
the reply could no longer judge them all, the first text always kept."""

from __future__ import annotations

from types import SimpleNamespace

from gligabao.memory.windows import REPLY_TOKENS_PER_FACT, WINDOW_RESOLVE_MAX_TOKENS, within_reply_budget

ROOM = WINDOW_RESOLVE_MAX_TOKENS // REPLY_TOKENS_PER_FACT


def text_of(facts: int) -> SimpleNamespace:
    return SimpleNamespace(graph=SimpleNamespace(facts=[object()] * facts))


def test_short_texts_stay_together():
    texts = [text_of(3) for _ in range(50)]

    assert within_reply_budget(texts) == texts


def test_a_window_of_dense_texts_is_cut_where_the_reply_runs_out():
    texts = [text_of(40) for _ in range(50)]

    kept = within_reply_budget(texts)

    assert len(kept) == ROOM // 40 and kept == texts[: ROOM // 40]


def test_the_first_text_is_kept_whatever_its_facts():
    texts = [text_of(ROOM + 10), text_of(1)]

    assert within_reply_budget(texts) == texts[:1]
