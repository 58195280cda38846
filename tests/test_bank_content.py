"""Content fixes: prompts say what rows mean; no degenerate variants."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from quizapp.bank.loader import load_bank

ROOT = Path(__file__).resolve().parent.parent / "exercises"
BANK = load_bank(ROOT)


def test_attention_output_prompt_says_one_item_per_row() -> None:
    prompt = BANK.exercises["05-attention/02-attention-output"].generate(0).prompt
    assert "Each row of $Q$ is one query" in prompt and "row of $K$ is one key" in prompt


def test_top_keyword_has_no_all_zero_rows() -> None:
    ex = BANK.exercises["04-retrieval-and-softmax/04-top-keyword"]
    for seed in range(200):
        v = ex.generate(seed)
        q, k = np.asarray(v.context["Q"]), np.asarray(v.context["K"])
        assert not np.any(np.all(k == 0, axis=1)), seed
        assert not np.any(np.all(q == 0, axis=1)), seed


def test_fill_in_weights_blanks_need_computing() -> None:
    ex = BANK.exercises["05-attention/08-fill-in-weights"]
    for seed in range(200):
        v = ex.generate(seed)
        mask = np.asarray(v.context["mask"])
        per_row = mask.sum(axis=1)
        assert not np.any(per_row == 1), f"seed {seed}: a lone blank is 1 minus the given ones"
        w = np.round(np.asarray(v.expected), 2)
        for i in np.nonzero(per_row)[0]:
            assert len(set(w[i].tolist())) == w.shape[1], f"seed {seed}: tied weights in row {i}"
