"""Multi-head attention with the sizes of the paper (Vaswani et al. 2017, section 3.2.2):
d_k = d_v = d_model / h, W_Q, W_K, W_V of d_model x d_model split into h blocks of d_k columns,
W_O of (h d_v) x d_model.  The bundled exercises draw those sizes, their expected answers agree
with a NumPy computation written here, and a file with sizes that disagree is refused at the
param's line (while a text stored before the rule still loads)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from quizapp.bank.loader import load_bank, load_exercise_file, load_exercise_source

ROOT = Path(__file__).resolve().parent.parent / "exercises"
BANK = load_bank(ROOT)
MULTI_HEAD = [
    "05-attention/06-multi-head",
    "05-attention/06a-multi-head-step-by-step",
    "05-attention/07-multi-head-concat",
]


def _softmax_rows(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _numpy_multi_head(X, WQ, WK, WV, WO, h):
    d_model = X.shape[1]
    d = d_model // h
    heads = []
    for i in range(h):
        cols = slice(i * d, (i + 1) * d)
        Q, K, V = X @ WQ[:, cols], X @ WK[:, cols], X @ WV[:, cols]
        heads.append(_softmax_rows(Q @ K.T / np.sqrt(d)) @ V)
    concat = np.hstack(heads)
    return heads, concat, concat @ WO


def test_the_bundled_exercises_use_d_k_equal_to_d_model_over_h() -> None:
    for eid in MULTI_HEAD:
        params = BANK.exercises[eid].params
        assert (params.d_model, params.heads, params.d_k, params.d_v) == (4, 2, 2, 2), eid
        assert params.d_k * params.heads == params.d_model, eid


@pytest.mark.parametrize("eid", MULTI_HEAD)
def test_every_variant_has_the_papers_shapes_and_a_numpy_checked_answer(eid: str) -> None:
    ex = BANK.exercises[eid]
    for seed in range(40):
        v = ex.generate(seed)
        X, WQ, WK, WV, WO = (
            np.asarray(v.values[k], dtype=float) for k in ("X", "W_Q", "W_K", "W_V", "W_O")
        )
        h = v.values["heads"]
        assert X.shape == (2, 4)
        assert WQ.shape == WK.shape == WV.shape == (4, 4), seed  # d_model x d_model
        assert WO.shape == (h * v.values["d_v"], 4) == (4, 4), seed  # back to d_model
        assert v.values["d_k"] == v.values["d_v"] == 4 // h == 2
        heads, concat, out = _numpy_multi_head(X, WQ, WK, WV, WO, h)
        if v.parts:
            got = {p.name: np.asarray(p.expected, dtype=float) for p in v.parts}
            np.testing.assert_allclose(got["H1"], heads[0], atol=1e-12)
            np.testing.assert_allclose(got["H2"], heads[1], atol=1e-12)
            np.testing.assert_allclose(got["C"], concat, atol=1e-12)
            np.testing.assert_allclose(got["O"], out, atol=1e-12)
        else:
            want = concat if eid.endswith("concat") else out
            np.testing.assert_allclose(np.asarray(v.expected, dtype=float), want, atol=1e-12)
        assert "d_{\\text{model}} = 4" in v.prompt and "d_k = 2" in v.prompt


OLD_SIZES = """\
title: Multi-head attention
kind: multi_head_attention
tolerance: {rtol: 0, atol: 0.01}
prompt: |
  Compute the output to 2 decimal places.
params:
  tokens: 2
  d_model: 3
  heads: 2
  d_k: 4
  d_v: 1
  ask: output
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "q" / "mh.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_file_whose_d_k_disagrees_with_d_model_is_refused_at_the_field(tmp_path: Path) -> None:
    path = _write(tmp_path, OLD_SIZES)
    exercise, errors = load_exercise_file(path)
    assert exercise is None
    by_field = {e.message.split(":", 1)[0]: e for e in errors}
    assert set(by_field) == {"params.d_k", "params.d_v"}, [e.message for e in errors]
    d_k = by_field["params.d_k"]
    assert d_k.file == str(path) and d_k.line == 10  # the line of "d_k: 4"
    assert "d_k = 4 with heads = 2 and d_model = 3" in d_k.message
    assert "Vaswani" in d_k.message and "choose a d_model that heads = 2 divides" in d_k.message
    assert by_field["params.d_v"].line == 11


def test_the_message_says_what_to_write_when_heads_divide_d_model(tmp_path: Path) -> None:
    text = OLD_SIZES.replace("d_model: 3", "d_model: 4").replace("d_v: 1", "d_v: 2")
    _exercise, errors = load_exercise_file(_write(tmp_path, text))
    assert [e.message.split(":", 1)[0] for e in errors] == ["params.d_k"]
    assert errors[0].message.endswith("write d_k: 2")
    fixed = text.replace("d_k: 4", "d_k: 2")
    exercise, errors = load_exercise_file(_write(tmp_path, fixed))
    assert exercise is not None and not errors


def test_defaults_left_unset_are_named_as_such(tmp_path: Path) -> None:
    text = OLD_SIZES.replace("  d_model: 3\n", "").replace("  d_k: 4\n", "")
    _exercise, errors = load_exercise_file(_write(tmp_path, text))
    messages = [e.message for e in errors]
    assert any("d_k = 4 (the default)" in m and "d_model = 3 (the default)" in m for m in messages)


def test_a_w_o_that_does_not_map_back_to_d_model_is_refused(tmp_path: Path) -> None:
    text = (
        OLD_SIZES.replace("d_model: 3", "d_model: 4")
        .replace("d_k: 4", "d_k: 2")
        .replace("d_v: 1", "d_v: 2")
        .replace("  ask: output\n", "  ask: output\n  d_out: 3\n")
    )
    _exercise, errors = load_exercise_file(_write(tmp_path, text))
    assert [e.message.split(":", 1)[0] for e in errors] == ["params.d_out"]
    assert "write d_out: 4" in errors[0].message


def test_a_text_stored_before_the_rule_still_loads_and_draws() -> None:
    """Variants of the old sizes are stored facts: their text must stay readable."""
    exercise = load_exercise_source("05-attention/06-multi-head", OLD_SIZES)
    v = exercise.generate(0)
    assert np.asarray(v.values["W_Q"]).shape == (3, 8)
