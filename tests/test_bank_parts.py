"""Multi-part exercises, pure (quizapp/bank/parts.py and the kinds): follow-through credit for
an error carried forward, its refusal where an earlier answer makes a part trivial, the verdict's
shape, locks and merged answers, the dependency order, points, the stored record and page of a
multi-part variant, and ``steps: true`` of the attention kinds (same draws).

Every expected value is computed here with NumPy from the variant's numbers.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from quizapp.bank import grade_answer, load_exercise_source
from quizapp.bank.loader import Exercise
from quizapp.bank.parts import (
    dependency_problems,
    expected_part_answers,
    locked_parts,
    merge_answers,
    share_points,
    trivial_reason,
)
from quizapp.bank.stored import freeze, thaw
from quizapp.grading import Verdict
from quizapp.page import KEY_PAGE_KEYS, TRIMMED_PARTS, key_page_paths, page_markup, render_page

SQUARE = """\
title: Scores then weights
kind: expression
{extra}variables:
  Q: {{matrix: [2, 2], integers: [-2, 2]}}
  K: {{matrix: [2, 2], integers: [-2, 2]}}
require:
  - det(Q) != 0 and det(K) != 0
  - all(max(Q @ K.T, axis=1) != min(Q @ K.T, axis=1))
  - all(softmax(Q @ K.T / sqrt(2)) > 0.03)
prompt: 'Q = {{{{ Q }}}}, K = {{{{ K }}}}.'
parts:
  - name: S
    prompt: 'S = QK^T'
    answer: Q @ K.T
    detectors: {{attention: {{Q: Q, K: K, ask: scores}}}}
  - name: W
    prompt: 'W = softmax(S / sqrt 2)'
    answer: softmax(S / sqrt(2))
    tolerance: {{decdig: 2}}
    points: 6
{part_extra}    detectors: {{attention: {{Q: Q, K: K, ask: weights}}}}
"""


def exercise(extra: str = "", part_extra: str = "") -> Exercise:
    return load_exercise_source("q/square", SQUARE.format(extra=extra, part_extra=part_extra))


def softmax_rows(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def text(m: np.ndarray, digits: int = 6) -> str:
    return "\n".join(" ".join(f"{v:.{digits}f}" for v in row) for row in np.atleast_2d(m))


def numbers(v) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    Q = np.asarray(v.values["Q"], float)
    K = np.asarray(v.values["K"], float)
    S = Q @ K.T
    return Q, K, S, softmax_rows(S / np.sqrt(2))


def a_variant(ex: Exercise, ok, start: int = 0):
    """The first variant (seed from ``start``) whose numbers satisfy ``ok(Q, K, S, W)``."""
    for seed in range(start, start + 500):
        v = ex.generate(seed)
        if ok(*numbers(v)):
            return v
    raise AssertionError("no seed found")


def slipped(S: np.ndarray, W: np.ndarray) -> np.ndarray:
    """S with one entry of each row off by 3, chosen so that every weight of that row changes
    at 2 decimals (the weights computed from it are wrong everywhere against the true W)."""
    bad = S.copy()
    for i in range(S.shape[0]):
        for j, delta in [(j, d) for j in range(S.shape[1]) for d in (3, -3)]:
            row = S[i].copy()
            row[j] += delta
            w = np.round(softmax_rows(row[None, :] / np.sqrt(2)), 2)[0]
            if np.all(np.abs(w - W[i]) > 0.0051):
                bad[i] = row
                break
        else:
            raise AssertionError(f"no slip of row {i} changes all its weights")
    return bad


def true_score(answer: np.ndarray, W: np.ndarray) -> float:
    """The share of W's cells that ``answer`` (rounded to 2 decimals) gets right (decdig 2)."""
    return float(np.mean(np.abs(np.round(answer, 2) - W) <= 0.0051))


# --------------------------------------------------------------------------------------------
# Follow-through


def test_a_slip_in_s_is_carried_into_w_for_full_credit() -> None:
    v = exercise().generate(4)
    _, _, S, W = numbers(v)
    bad = slipped(S, W)
    w_from_bad = softmax_rows(bad / np.sqrt(2))
    verdict = grade_answer(v, {"S": text(bad, 0), "W": text(w_from_bad, 2)})
    s, w = verdict.parts["S"], verdict.parts["W"]
    assert (s.status, s.score, s.follow_through) == ("partial", 0.5, False)  # 2 of 4 right
    assert (w.status, w.score, w.follow_through) == ("correct", 1.0, True)
    assert w.message.startswith("Correct given your S.")
    # S is worth 4 of the 10 points (W gives 6): a points-weighted mean.
    assert verdict.score == pytest.approx(0.4 * 0.5 + 0.6 * 1.0)
    assert verdict.status == "partial"
    assert "W correct given your S" in verdict.message
    # The same W against the true S is wrong: the credit is follow-through's.
    alone = grade_answer(v, {"S": text(S, 0), "W": text(w_from_bad, 2)})
    assert alone.parts["W"].status != "correct" and not alone.parts["W"].follow_through


def test_a_part_right_by_follow_through_names_no_mistake_found_against_the_true_value() -> None:
    """W computed from transposed scores is right given the student's S.  Against the true S it
    looks like "the scores were transposed": that is S's mistake (S's own verdict says S is
    wrong, W's message says it is graded on the student's S), not one of W, which is correct."""
    checked = 0
    for seed in range(8):
        v = exercise().generate(seed)
        _, _, S, W = numbers(v)
        if S.shape[0] != S.shape[1]:
            continue
        w_from_transposed = softmax_rows(S.T / np.sqrt(2))
        if np.allclose(np.round(w_from_transposed, 2), W):
            continue  # a symmetric S: transposing it changes nothing
        # the same W alone, against the true S, is the named mistake
        alone = grade_answer(v, {"S": text(S, 0), "W": text(w_from_transposed, 2)}).parts["W"]
        assert "scores_transposed" in [m.code for m in alone.mistakes]
        verdict = grade_answer(v, {"S": text(S.T, 0), "W": text(w_from_transposed, 2)})
        w = verdict.parts["W"]
        assert (w.status, w.follow_through, w.mistakes) == ("correct", True, [])
        assert verdict.parts["S"].status != "correct"
        checked += 1
    assert checked >= 3


def test_follow_through_credit_per_exercise_and_per_part_and_off() -> None:
    for extra, part_extra, credit in [
        ("follow_through_credit: 0.5\n", "", 0.5),
        ("follow_through_credit: 0.5\n", "    follow_through_credit: 0.25\n", 0.25),
        ("", "    follow_through_credit: 0.8\n", 0.8),
    ]:
        v = exercise(extra, part_extra).generate(4)
        _, _, S, W = numbers(v)
        bad = slipped(S, W)
        verdict = grade_answer(v, {"S": text(bad, 0), "W": text(softmax_rows(bad / np.sqrt(2)), 2)})
        w = verdict.parts["W"]
        against_true = true_score(softmax_rows(bad / np.sqrt(2)), W)
        assert against_true == 0.0  # so the follow-through credit is what W earns
        assert (w.status, w.score, w.follow_through) == ("partial", credit, True)
        assert f"{credit:.0%} follow-through credit" in w.message
    v = exercise("follow_through_credit: 0\n").generate(4)
    _, _, S, W = numbers(v)
    bad = slipped(S, W)
    verdict = grade_answer(v, {"S": text(bad, 0), "W": text(softmax_rows(bad / np.sqrt(2)), 2)})
    assert not verdict.parts["W"].follow_through and verdict.parts["W"].status != "correct"


def test_partly_right_given_your_s_earns_that_share_of_the_credit() -> None:
    v = exercise().generate(4)
    _, _, S, W = numbers(v)
    bad = slipped(S, W)
    w_bad = np.round(softmax_rows(bad / np.sqrt(2)), 2)
    assert true_score(w_bad, W) == 0.0
    w_bad[1, 1] += 0.5  # one cell wrong also against the follow-through value
    verdict = grade_answer(v, {"S": text(bad, 0), "W": text(w_bad, 2)})
    w = verdict.parts["W"]
    assert (w.status, w.follow_through, w.score) == ("partial", True, 0.75)
    assert w.cells == [[True, True], [True, False]]
    assert w.message.startswith("3 of 4 entries are correct given your S.")


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda Q, K, S: np.zeros((2, 2)), "your S is all zeros"),
        (lambda Q, K, S: np.eye(2), "your S is the identity matrix"),
        (
            lambda Q, K, S: np.array([[3.0, 3.0], [-1.0, -1.0]]),
            "every row of your S has equal entries",
        ),
        (lambda Q, K, S: np.array([[2.0, -1.0], [2.0, -1.0]]), "all rows of your S are the same"),
        (lambda Q, K, S: Q, "your S is a copy of Q"),
    ],
)
def test_follow_through_is_refused_when_the_earlier_answer_makes_w_trivial(make, reason) -> None:
    ex = exercise()

    def fits(Q, K, S, W):
        fake = make(Q, K, S)
        return (
            not np.allclose(fake, S)
            and not np.allclose(S, np.eye(2))
            and np.ptp(S, axis=1).min() > 0
            and np.ptp(S, axis=0).min() > 0
            and not np.allclose(Q, S)
            and np.any(np.abs(softmax_rows(fake / np.sqrt(2)) - W) > 0.02)
        )

    v = a_variant(ex, fits)
    Q, K, S, W = numbers(v)
    fake = make(Q, K, S)
    verdict = grade_answer(v, {"S": text(fake, 0), "W": text(softmax_rows(fake / np.sqrt(2)), 2)})
    w = verdict.parts["W"]
    assert not w.follow_through and w.status in ("incorrect", "partial")
    assert f"No follow-through credit: {reason}, which makes W trivial." in w.message


def test_trivial_reason_only_refuses_forms_the_true_value_does_not_have() -> None:
    true = np.array([[1.0, 2.0], [3.0, 5.0]])
    assert trivial_reason(np.zeros((2, 2)), true, "S") == "your S is all zeros"
    assert trivial_reason(np.zeros((2, 2)), np.zeros((2, 2)), "S") is None
    assert trivial_reason(np.eye(2), true, "S") == "your S is the identity matrix"
    assert trivial_reason(np.eye(2), np.eye(2), "S") is None
    assert trivial_reason(1.0, 4.0, "d") == "your d is 1"
    assert trivial_reason(0.0, 4.0, "d") == "your d is 0"
    assert trivial_reason(np.array([2.0, 2.0]), np.array([1.0, 2.0]), "x") is None  # a vector
    assert trivial_reason(true + 1, true, "S", {"Q": true + 1}) == "your S is a copy of Q"
    assert trivial_reason(true + 1, true + 1, "S", {"Q": true + 1}) is None
    assert trivial_reason(np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]]), "S") is None


def test_an_unreadable_part_makes_the_answer_invalid_and_hides_the_others() -> None:
    v = exercise().generate(4)
    _, _, S, W = numbers(v)
    verdict = grade_answer(v, {"S": text(S, 0), "W": "0.5 0.5\n0.5 x"})
    assert verdict.status == "invalid" and verdict.score == 0.0 and not verdict.used_attempt
    assert verdict.parts["W"].status == "invalid"
    assert verdict.parts["S"].status == "ungraded"  # not graded, not revealed
    assert verdict.message.startswith("Part W could not be read:")
    assert "used no attempt" in verdict.message
    # Unless S was carried over as already correct (locked): then it is shown as it is.
    from quizapp.bank.parts import grade_parts

    verdict = grade_parts(v, {"S": text(S, 0), "W": "x"}, locked=frozenset({"S"}))
    assert verdict.parts["S"].status == "correct"


def test_unanswered_parts_score_zero_and_wrong_kinds_of_answer_are_invalid() -> None:
    v = exercise().generate(4)
    _, _, S, _ = numbers(v)
    verdict = grade_answer(v, {"S": text(S, 0)})
    assert verdict.parts["W"].status == "unanswered" and verdict.parts["W"].score == 0.0
    assert verdict.score == pytest.approx(0.4) and verdict.status == "partial"
    assert grade_answer(v, {"S": text(S, 0), "W": "   "}).parts["W"].status == "unanswered"
    bad = grade_answer(v, {"X": "1"})
    assert bad.status == "invalid" and "no part 'X'" in bad.message
    assert grade_answer(v, text(S, 0)).status == "invalid"
    single = load_exercise_source(
        "q/one", "title: t\nkind: expression\nprompt: p\nanswer: 1 + 1\n"
    ).generate(0)
    assert "not parts" in grade_answer(single, {"S": "2"}).message


def test_the_verdicts_json_has_the_contracts_keys_per_part() -> None:
    v = exercise().generate(4)
    _, _, S, W = numbers(v)
    out = grade_answer(v, {"S": text(S.T, 0), "W": text(softmax_rows(S), 2)}).to_dict()
    assert set(out) == {"status", "score", "message", "cells", "mistakes", "parts"}
    assert list(out["parts"]) == ["S", "W"]
    for part in out["parts"].values():
        assert set(part) == {"status", "score", "follow_through", "message", "cells", "mistakes"}
    json.dumps(out)  # plain JSON
    single = Verdict("correct", 1.0, "Correct.", [[True]]).to_dict()
    assert set(single) == {"status", "score", "message", "cells", "mistakes"}


def test_the_named_mistakes_of_the_attention_kinds_per_part() -> None:
    ex = exercise()
    v = a_variant(ex, lambda Q, K, S, W: not np.allclose(S, S.T))
    Q, K, S, W = numbers(v)
    got = grade_answer(
        v,
        {
            "S": text(K @ Q.T, 0),  # KQ^T
            "W": text(softmax_rows(S), 2),  # the scaling forgotten
        },
    )
    if "scores_transposed" in v.parts[0].detectors:
        assert "scores_transposed" in got.parts["S"].mistake_codes
    assert "missing_scale" in v.parts[1].detectors
    assert "missing_scale" in got.parts["W"].mistake_codes
    assert any(m.message.startswith("Part W: You forgot to divide") for m in got.mistakes)
    column = np.exp(S / np.sqrt(2)) / np.exp(S / np.sqrt(2)).sum(axis=0, keepdims=True)
    if "softmax_axis" in v.parts[1].detectors:
        got = grade_answer(v, {"S": text(S, 0), "W": text(column, 2)})
        assert "softmax_axis" in got.parts["W"].mistake_codes


# --------------------------------------------------------------------------------------------
# Several submissions: locks and merged answers


def test_locks_follow_correctness_and_merged_answers_keep_earlier_parts() -> None:
    v = exercise().generate(4)
    _, _, S, W = numbers(v)
    bad = slipped(S, W)
    by_ft = grade_answer(v, {"S": text(bad, 0), "W": text(softmax_rows(bad / np.sqrt(2)), 2)})
    assert locked_parts(v, by_ft) == set()  # W's value may still change with S
    right = grade_answer(v, {"S": text(S, 0), "W": text(W, 2)})
    assert locked_parts(v, right) == {"S", "W"}
    assert locked_parts(v, right.to_dict() | {"parts": {**right.to_dict()["parts"]}}) == {"S", "W"}
    merged, taken, ignored = merge_answers(v, {"W": "1 2\n3 4"}, {"S": "s"}, set())
    assert merged == {"S": "s", "W": "1 2\n3 4"} and taken == ["W"] and ignored == []
    merged, taken, ignored = merge_answers(v, {"S": "new", "W": " "}, {"S": "s", "W": "w"}, {"S"})
    assert merged == {"S": "s", "W": "w"} and taken == [] and ignored == ["S"]
    with pytest.raises(ValueError, match="no part 'T'"):
        merge_answers(v, {"T": "1"}, None, set())


# --------------------------------------------------------------------------------------------
# Authoring helpers


def test_dependency_problems() -> None:
    assert dependency_problems(["S", "W"], [{"Q"}, {"S"}], {"Q"}) == []
    assert dependency_problems(["S", "S"], [set(), set()], set()) == [
        (1, "the part name 'S' is used twice (parts must differ)")
    ]
    assert dependency_problems(["Q"], [set()], {"Q"})[0][1].startswith("the part name 'Q' is also")
    assert dependency_problems(["S"], [{"S"}], set()) == [
        (0, "part S uses itself (S in its own answer)")
    ]
    assert dependency_problems(["S", "W"], [{"W"}, set()], set()) == [
        (0, "part S uses W, a later part: a part may use only earlier parts (move W before S)")
    ]
    assert dependency_problems(["A", "B", "C"], [{"C"}, {"A"}, {"B"}], set()) == [
        (0, "the parts form a cycle: A -> C -> B -> A")
    ]


def test_share_points() -> None:
    assert share_points(10, [None, 6]) == [4.0, 6.0]
    assert share_points(10, [None, None, 4]) == [3.0, 3.0, 4.0]
    assert share_points(12, [None, None, None]) == [4.0, 4.0, 4.0]
    assert share_points(7, [3, 4]) == [3.0, 4.0]


def test_every_part_giving_points_sets_the_exercises_points() -> None:
    text_ = SQUARE.format(extra="", part_extra="").replace(
        "  - name: W\n", "    points: 2\n  - name: W\n"
    )
    ex = load_exercise_source("q/sum", text_)
    assert ex.points == 8  # 2 + 6, points: left out
    assert [p.points for p in ex.generate(4).parts] == [2.0, 6.0]
    assert exercise().points == 10


# --------------------------------------------------------------------------------------------
# The stored record and page


def test_a_multi_part_variant_is_stored_and_read_back_exactly() -> None:
    v = exercise().generate(4)
    back = thaw(json.loads(json.dumps(freeze(v))))
    assert [p.name for p in back.parts] == ["S", "W"]
    for a, b in zip(v.parts, back.parts, strict=True):
        assert np.array_equal(np.asarray(a.expected), np.asarray(b.expected))
        assert np.asarray(a.expected).dtype == np.asarray(b.expected).dtype
        for name in (
            "prompt",
            "answer_form",
            "tolerance",
            "points",
            "follow_through",
            "uses",
            "follow_through_credit",
            "detectors",
            "hints",
        ):
            assert getattr(a, name) == getattr(b, name), name
        assert a.context.keys() == b.context.keys()
        for key in a.context:
            assert np.array_equal(np.asarray(a.context[key]), np.asarray(b.context[key]))
        assert [s.title for s in a.solution] == [s.title for s in b.solution]
    _, _, S, W = numbers(back)
    assert grade_answer(back, expected_part_answers(back)).status == "correct"
    assert freeze(back) == json.loads(json.dumps(freeze(v)))


def test_records_without_parts_are_unchanged_and_old_ones_still_thaw() -> None:
    single = load_exercise_source(
        "q/one", "title: t\nkind: expression\nprompt: p\nanswer: 1 + 1\n"
    ).generate(0)
    record = freeze(single)
    assert "parts" not in record  # a regrade compares records: old ones must stay equal
    old = {k: v for k, v in record.items()}
    assert thaw(old).parts == []


def test_the_page_has_each_parts_prompt_solution_and_answer() -> None:
    v = exercise().generate(4)
    page = render_page(v)
    assert [p["name"] for p in page["parts"]] == ["S", "W"]
    s, w = page["parts"]
    assert s["points"] == 4.0 and w["points"] == 6.0 and w["uses"] == ["S"]
    assert "<math" in s["expected_html"] and s["solution"][-1]["title"] == "Answer"
    assert page["expected_html"] is None and page["expected_text"] == ""  # per part instead
    assert [st["title"] for st in page["solution"]][-1] == "W · Answer"
    json.dumps(page)
    marked = page_markup(page)
    assert marked["parts"][1]["prompt_html"] == w["prompt_html"]
    # Read without its answer keys (an unfinished variant, ``key_page_paths``): each part's
    # solution and expected answer are None, everything else the same.
    trimmed = {k: v for k, v in page.items() if k not in KEY_PAGE_KEYS}
    trimmed["parts"] = [
        {k: v for k, v in p.items() if k not in KEY_PAGE_KEYS} for p in page["parts"]
    ]
    shown = page_markup(trimmed)
    assert [(p["solution"], p["expected"]) for p in shown["parts"]] == [(None, None)] * 2
    assert [p["prompt_html"] for p in shown["parts"]] == [p["prompt_html"] for p in marked["parts"]]
    paths = key_page_paths()
    assert ("solution",) in paths and ("parts", 0, "expected_html") in paths
    assert ("parts", TRIMMED_PARTS - 1, "solution") in paths
    assert ("parts", TRIMMED_PARTS, "solution") not in paths


# --------------------------------------------------------------------------------------------
# steps: true of the attention kinds


def _kind_exercise(kind: str, params: str, steps: bool) -> Exercise:
    source = (
        f"title: t\nkind: {kind}\nprompt: p\ntolerance: {{decdig: 2}}\n"
        f"params: {{{params}{', steps: true' if steps else ''}}}\n"
    )
    return load_exercise_source(f"q/{kind}-{steps}", source)


@pytest.mark.parametrize("ask", ["scaled", "weights", "output"])
def test_attention_steps_draw_the_same_numbers_and_give_each_matrix(ask: str) -> None:
    plain = _kind_exercise("attention", f"ask: {ask}", False)
    steps = _kind_exercise("attention", f"ask: {ask}", True)
    for seed in range(12):
        a, b = plain.generate(seed), steps.generate(seed)
        for key in ("Q", "K", "V", "queries", "keywords"):
            assert np.array_equal(np.asarray(a.values[key]), np.asarray(b.values[key]))
        Q, K, V = (np.asarray(b.values[k], float) for k in ("Q", "K", "V"))
        S = Q @ K.T
        Z = S / np.sqrt(K.shape[1])
        W = softmax_rows(Z)
        want = {"S": S, "Z": Z, "W": W, "O": W @ V}
        names = {"scaled": ["S", "Z"], "weights": ["S", "Z", "W"], "output": ["S", "Z", "W", "O"]}
        assert [p.name for p in b.parts] == names[ask]
        for part in b.parts:
            np.testing.assert_allclose(part.expected, want[part.name], rtol=1e-12, atol=1e-12)
        assert np.array_equal(b.parts[-1].expected, a.expected)
        assert b.parts[-1].uses == (names[ask][-2],)
        assert grade_answer(b, expected_part_answers(b)).status == "correct"


def test_self_attention_steps_ask_for_the_projections_first() -> None:
    plain = _kind_exercise("self_attention", "tokens: 3, d_model: 3, d_k: 2", False)
    steps = _kind_exercise("self_attention", "tokens: 3, d_model: 3, d_k: 2", True)
    for seed in range(8):
        a, b = plain.generate(seed), steps.generate(seed)
        X, WQ, WK, WV = (np.asarray(b.values[k], float) for k in ("X", "W_Q", "W_K", "W_V"))
        assert np.array_equal(X, np.asarray(a.values["X"], float))
        Q, K, V = X @ WQ, X @ WK, X @ WV
        Z = Q @ K.T / np.sqrt(2)
        W = softmax_rows(Z)
        want = {"Q": Q, "K": K, "V": V, "Z": Z, "W": W, "O": W @ V}
        assert [p.name for p in b.parts] == list(want)
        for part in b.parts:
            np.testing.assert_allclose(part.expected, want[part.name], rtol=1e-12, atol=1e-12)
        assert b.parts[3].uses == ("Q", "K") and b.parts[5].uses == ("W", "V")
        np.testing.assert_allclose(b.parts[-1].expected, a.expected, rtol=1e-12)


def test_multi_head_steps_ask_for_each_head_then_the_concatenation_and_w_o() -> None:
    params = "tokens: 2, d_model: 3, heads: 2, d_k: 2, d_v: 1"
    plain = _kind_exercise("multi_head_attention", params, False)
    steps = _kind_exercise("multi_head_attention", params, True)
    for seed in range(8):
        # at revision 2: from 3 each draws again where its own named mistakes coincide (the
        # parts name other mistakes than the one answer), so the two may draw other numbers
        a, b = plain.generate(seed, 2), steps.generate(seed, 2)
        X, WQ, WK, WV, WO = (
            np.asarray(b.values[k], float) for k in ("X", "W_Q", "W_K", "W_V", "W_O")
        )
        heads = []
        for i in range(2):
            q, k, v = (
                X @ WQ[:, 2 * i : 2 * i + 2],
                X @ WK[:, 2 * i : 2 * i + 2],
                X @ WV[:, i : i + 1],
            )
            heads.append(softmax_rows(q @ k.T / np.sqrt(2)) @ v)
        C = np.hstack(heads)
        want = {"H1": heads[0], "H2": heads[1], "C": C, "O": C @ WO}
        assert [p.name for p in b.parts] == list(want)
        for part in b.parts:
            np.testing.assert_allclose(part.expected, want[part.name], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(b.parts[-1].expected, a.expected, rtol=1e-12)
        assert b.parts[2].follow_through == "hstack(H1, H2)" and b.parts[3].uses == ("C",)


def test_a_head_computed_wrong_is_carried_into_the_concatenation() -> None:
    ex = _kind_exercise(
        "multi_head_attention", "tokens: 2, d_model: 3, heads: 2, d_k: 2, d_v: 1", True
    )
    v = ex.generate(3)
    h1 = np.asarray(v.parts[0].expected, float) + 0.5
    h2 = np.asarray(v.parts[1].expected, float)
    C = np.hstack([h1, h2])
    out = C @ np.asarray(v.values["W_O"], float)
    got = grade_answer(
        v, {"H1": text(h1, 4), "H2": text(h2, 4), "C": text(C, 4), "O": text(out, 4)}
    )
    assert got.parts["H1"].status == "incorrect"
    assert got.parts["C"].follow_through and got.parts["C"].status == "correct"
    assert got.parts["O"].follow_through and got.parts["O"].status == "correct"
    assert got.score == pytest.approx(0.75)


@pytest.mark.parametrize(
    "exercise_id",
    [
        "05-attention/02a-attention-step-by-step",
        "05-attention/03a-self-attention-step-by-step",
        "05-attention/06a-multi-head-step-by-step",
        "05-attention/01a-weights-step-by-step",
    ],
)
def test_each_parts_mistakes_are_named_on_that_part_only(exercise_id: str) -> None:
    """For every mistake a part names: the answer that mistake produces (the kind's own
    formula, quizapp/bank/kinds/_mistakes.py; the formulas are checked against NumPy in
    tests/test_bank_detectors.py), typed in that part with every other part right, is named
    there and nowhere else, and never on the right answer."""
    from test_web_support import EXERCISES

    from quizapp.bank import load_bank
    from quizapp.bank.kinds._mistakes import mistaken_value

    quiz = load_bank(EXERCISES / exercise_id.split("/")[0])
    ex = quiz.exercises[exercise_id]
    fired: set[str] = set()
    for seed in range(6):
        v = ex.generate(seed)
        right = expected_part_answers(v)
        assert grade_answer(v, right).mistakes == []
        for part in v.parts:
            for code in part.detectors:
                if code == "rows_dont_sum_to_one":
                    wrong = np.asarray(part.expected, float).copy()
                    wrong.flat[0] += 0.3
                else:
                    wrong = mistaken_value(code, part.context)
                verdict = grade_answer(v, {**right, part.name: text(np.atleast_2d(wrong), 9)})
                assert code in verdict.parts[part.name].mistake_codes, (seed, part.name, code)
                others = [n for n, pv in verdict.parts.items() if n != part.name and pv.mistakes]
                assert others == [], (seed, part.name, code, others)
                fired.add(code)
    assert "missing_scale" in fired
