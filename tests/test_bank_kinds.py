"""Every exercise kind: deterministic, well-posed, expected answers right (checked independently)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from pydantic import ValidationError

from quizapp.bank.kinds import all_kinds, get_kind
from quizapp.bank.types import Generated, KindParams

REPO = Path(__file__).resolve().parent.parent
SEEDS = range(200)


def exercise_params() -> list[tuple[str, str, dict]]:
    """(label, kind, params) for every non-expression exercise of the bank, plus each kind's
    defaults."""
    out = [(f"{name}:defaults", name, {}) for name in sorted(all_kinds()) if name != "expression"]
    for f in sorted((REPO / "exercises").glob("*/*.yaml")):
        if f.name == "quiz.yaml":
            continue
        data = yaml.safe_load(f.read_text())
        if data["kind"] != "expression":
            out.append((f"{f.parent.name}/{f.stem}", data["kind"], data.get("params") or {}))
    return out


CASES = exercise_params()


# --- the conceptual kinds (second edition): each right option recomputed here -----------------


def option_value(text: str) -> np.ndarray:
    """The number, vector or matrix an option shows (``$A = \\begin{pmatrix}...$``)."""
    from quizapp.grading import parse_answer

    body = text.strip().strip("$")
    body = body.split("=", 1)[1] if "=" in body else body
    return np.asarray(parse_answer(body.strip()), dtype=float)


def one_right(g: Generated) -> str:
    """The right option's text; every other option names a mistake."""
    choices = g.answer_form.choices
    assert g.answer_form.type == "choice" and choices
    assert set(g.context["choice_mistakes"]) == set(range(len(choices))) - {g.expected}
    return choices[g.expected]


def check_solution_count(g: Generated, params: dict) -> None:
    (a, b, e), (c, d, f) = g.context["rows"]
    det = a * d - b * c
    if det:
        case = "exactly one solution"
    elif a * f == c * e and b * f == d * e:
        case = "infinitely many solutions"
    else:
        case = "no solution"
    assert one_right(g) == case


def check_basis(g: Generated, params: dict) -> None:
    B = np.asarray(g.context["B"], float)
    det = (
        B[0, 0] * (B[1, 1] * B[2, 2] - B[1, 2] * B[2, 1])
        - B[0, 1] * (B[1, 0] * B[2, 2] - B[1, 2] * B[2, 0])
        + B[0, 2] * (B[1, 0] * B[2, 1] - B[1, 1] * B[2, 0])
    )
    right = one_right(g)
    assert right.startswith("They form a basis of") == (round(det) != 0)
    assert right.startswith("They do not form a basis: they are linearly") == (round(det) == 0)
    for i in range(3):  # no vector a multiple of another
        for j in range(i + 1, 3):
            assert np.linalg.matrix_rank(B[:, [i, j]]) == 2


def _product(expr: str, mats: dict) -> np.ndarray:
    out = None
    for name, t in re.findall(r"([ABC])(\^T)?", expr):
        m = np.asarray(mats[name], float)
        m = m.T if t else m
        out = m if out is None else out @ m
    return out


def check_transpose_rule(g: Generated, params: dict) -> None:
    mats = {k: g.context[k] for k in "ABC" if k in g.context}
    q = g.context["question"]
    inner = q[1 : q.index(")")]
    target = _product(inner, mats).T
    assert _product(one_right(g).strip("$"), mats) == pytest.approx(target)


def check_orthogonal(g: Generated, params: dict) -> None:
    right = one_right(g)
    for i, text in enumerate(g.answer_form.choices):
        A = option_value(text)
        assert np.allclose(A.T @ A, np.eye(2)) == (text == right), (i, text)


def check_statements(g: Generated, params: dict) -> None:
    truth = {
        "commute": False,
        "transpose_same_order": False,
        "transpose_reversed": True,
        "associative": True,
        "ata": False,
        "zero_product": False,
        "inverse": True,
    }[g.context["statement_kind"]]
    assert one_right(g).startswith("True") == truth


def check_dot_scale(g: Generated, params: dict) -> None:
    shown, d = np.asarray(g.context["shown"], float), g.context["d"]
    mean_square = sum(v * v for v in shown) / len(shown)
    targets = {"$1$": 1.0, f"$\\sqrt{{d}} = {math.isqrt(d)}$": math.sqrt(d), f"$d = {d}$": d,
               f"$d^2 = {d * d}$": d * d}  # fmt: skip
    nearest = min(targets, key=lambda t: abs(math.log(mean_square) - math.log(targets[t])))
    assert one_right(g) == nearest
    assert nearest == ("$1$" if g.context["scaled"] else f"$d = {d}$")


def check_temperature(g: Generated, params: dict) -> None:
    x = np.asarray(g.context["x"], float)
    factor = {"4x": 4.0, "x": 1.0, "x/4": 0.25}[g.context["target"]]
    want = loop_softmax_rows((factor * x).reshape(1, -1))[0]
    assert option_value(one_right(g).replace("\\left", "").replace("\\right", "")) == (
        pytest.approx(want, abs=0.006)
    )


def check_softmax_statements(g: Generated, params: dict) -> None:
    x = np.asarray(g.context["x"], float)
    w = loop_softmax_rows(x.reshape(1, -1))[0]
    truth = {
        "shift": True,
        "scale": False,
        "order": bool(np.all(np.argsort(x) == np.argsort(w))),
        "zero": bool(np.any(w == 0)),
        "sum": True,
        "no_exp": False,
    }[g.context["statement_kind"]]
    assert one_right(g).startswith("True") == truth


def check_similarity(g: Generated, params: dict) -> None:
    q, K = np.asarray(g.context["q"], float), np.asarray(g.context["K"], float)
    dots = [sum(a * b for a, b in zip(q, k, strict=True)) for k in K]
    cos = [dots[j] / math.hypot(*q) / math.hypot(*K[j]) for j in range(len(K))]
    scores = cos if g.context["measure"] == "cosine" else dots
    assert g.expected == int(np.argmax(scores)) + 1
    assert int(np.argmax(dots)) != int(np.argmax(cos))


def loop_causal(Q: np.ndarray, K: np.ndarray) -> np.ndarray:
    n, d = Q.shape
    W = np.zeros((n, n))
    for i in range(n):
        s = [sum(Q[i, t] * K[j, t] for t in range(d)) / math.sqrt(d) for j in range(i + 1)]
        e = [math.exp(v - max(s)) for v in s]
        W[i, : i + 1] = [v / sum(e) for v in e]
    return W


def check_causal(g: Generated, params: dict) -> None:
    Q, K, V = (np.asarray(g.values[k], float) for k in "QKV")
    W = loop_causal(Q, K)
    assert g.expected == pytest.approx(W @ V)
    assert np.asarray(g.expected)[0] == pytest.approx(V[0])  # token 1 sees only itself


def check_causal_choice(g: Generated, params: dict) -> None:
    W = loop_causal(np.asarray(g.context["Q"], float), np.asarray(g.context["K"], float))
    assert option_value(one_right(g)) == pytest.approx(W, abs=0.006)


def check_it(g: Generated, params: dict) -> None:
    K, q = np.asarray(g.context["K"], float), np.asarray(g.context["q"], float)
    scores = [sum(a * b for a, b in zip(k, q, strict=True)) for k in K]
    assert g.expected == int(np.argmax(scores)) + 1
    labels = g.answer_form.choices
    assert labels[g.expected - 1] == ("animal" if g.context["ending"] == "tired" else "street")


def check_output(g: Generated, params: dict) -> None:
    V = np.asarray(g.context["V"], float)
    right = one_right(g)
    for text in g.answer_form.choices:
        c = option_value(text)
        inside = all(V[:, j].min() < c[j] < V[:, j].max() for j in range(V.shape[1]))
        is_row = any(np.allclose(c, r) for r in V)
        assert (inside and not is_row) == (text == right), text


def check_shapes(g: Generated, params: dict) -> None:
    c = g.context
    n, d, h, dk = c["n"], c["d_model"], c["heads"], c["d_k"]
    shape = {"W_Q": (d, dk), "Q": (n, dk), "scores": (n, n), "head": (n, dk),
             "concat": (n, h * dk), "W_O": (h * dk, d), "output": (n, d)}[c["part"]]  # fmt: skip
    assert one_right(g) == f"${shape[0]} \\times {shape[1]}$"
    assert len(set(g.answer_form.choices)) == len(g.answer_form.choices)


def check_parameters(g: Generated, params: dict) -> None:
    c = g.context
    d, h, dk = c["d_model"], c["heads"], c["d_k"]
    per_head = d * dk
    want = {"one_q": per_head, "all_q": h * per_head, "qkv": 3 * h * per_head,
            "layer": 3 * h * per_head + (h * dk) * d}[c["ask"]]  # fmt: skip
    assert float(g.expected) == want and dk * h == d


IDEAS = {
    "solution_count": check_solution_count,
    "basis_check": check_basis,
    "transpose_rule": check_transpose_rule,
    "orthogonal_choice": check_orthogonal,
    "matrix_statements": check_statements,
    "dot_product_scale": check_dot_scale,
    "softmax_temperature": check_temperature,
    "softmax_statements": check_softmax_statements,
    "similarity_choice": check_similarity,
    "causal_attention": check_causal,
    "causal_choice": check_causal_choice,
    "it_attends": check_it,
    "output_candidates": check_output,
    "attention_shapes": check_shapes,
    "attention_parameters": check_parameters,
}


def gen(kind: str, params: dict, seed: int) -> Generated:
    k = get_kind(kind)
    return k.generate(k.Params.model_validate(params), np.random.default_rng(seed))


def loop_softmax_rows(S: np.ndarray) -> np.ndarray:
    out = np.zeros_like(S, dtype=float)
    for i in range(S.shape[0]):
        exps = [math.exp(v - max(S[i])) for v in S[i]]
        out[i] = [e / sum(exps) for e in exps]
    return out


def loop_attention(Q, K, V):
    Q, K = np.asarray(Q, float), np.asarray(K, float)
    d = K.shape[1]
    S = np.array([[sum(q[t] * k[t] for t in range(d)) for k in K] for q in Q]) / math.sqrt(d)
    W = loop_softmax_rows(S)
    if V is None:
        return None, W
    V = np.asarray(V, float)
    out = np.array(
        [[sum(w[j] * V[j, c] for j in range(len(V))) for c in range(V.shape[1])] for w in W]
    )
    return out, W


def is_int(a) -> bool:
    x = np.asarray(a, dtype=float)
    return bool(np.all(np.abs(x - np.round(x)) < 1e-9))


def check_well_posed(kind: str, params: dict, g: Generated) -> None:
    # steps: true asks for each matrix as a part; the last part is the answer the kind asks for
    v, ctx, e = g.values, g.context, (g.parts[-1].expected if g.parts else g.expected)
    dec = params.get("decimals", 2)
    if kind == "linear_equation":
        assert is_int(e)
        assert v["a"] * float(e) + v["c"] == pytest.approx(v["b"])
    elif kind == "line_points":
        pts = np.asarray(e, float).reshape(-1, 2)
        assert len(pts) == params.get("count", 1)
        for x, y in pts:
            assert v["a"] * x + v["b"] * y == pytest.approx(v["c"])
        assert len({tuple(p) for p in pts.tolist()}) == len(pts)
    elif kind == "linear_system":
        A, y = np.asarray(v["A"], float), np.asarray(v["y"], float)
        assert is_int(e), "the solution must be an integer vector"
        assert abs(np.linalg.det(A)) > 0.5
        assert A @ e == pytest.approx(y)
    elif kind == "system_matrix_form":
        M = np.asarray(e, float)
        n = M.shape[0]
        assert is_int(M)
        assert abs(np.linalg.det(M[:, :n])) > 0.5
        assert v["system"].count("&=") == n
    elif kind == "basis_coordinates":
        n = v["n"]
        B = np.column_stack([np.asarray(v[f"b{j + 1}"], float) for j in range(n)])
        assert is_int(e)
        assert abs(np.linalg.det(B)) > 0.5
        assert B @ e == pytest.approx(np.asarray(v["v"], float))
    elif kind == "map_matrix":
        images = np.asarray(ctx["images"], float)
        basis = ctx["basis"]
        inputs = np.eye(images.shape[0]) if basis is None else np.asarray(basis, float)
        for b, img in zip(inputs, images, strict=True):
            assert e @ b == pytest.approx(img)
        assert is_int(e)
    elif kind == "linearity_compute":
        assert e == pytest.approx(
            v["a"] * np.asarray(v["Tu"], float) + v["b"] * np.asarray(v["Tv"], float)
        )
    elif kind == "linearity_choice":
        assert 0 <= e < len(g.answer_form.choices)
        assert len(ctx["choice_mistakes"]) == len(g.answer_form.choices) - 1
    elif kind == "row_times_column":
        r, c = np.asarray(v["row"]).ravel(), np.asarray(v["column"]).ravel()
        assert float(e) == sum(a * b for a, b in zip(r, c, strict=True))
    elif kind == "matrix_vector":
        A, x = np.asarray(v["A"], float), np.asarray(v["x"], float)
        assert A.shape[0] != A.shape[1]
        assert e == pytest.approx(np.array([sum(A[i] * x) for i in range(A.shape[0])]))
    elif kind == "matrix_product":
        A, B = np.asarray(v["A"], float), np.asarray(v["B"], float)
        assert e == pytest.approx(np.einsum("ik,kj->ij", A, B))
    elif kind == "non_commutativity":
        A, B = np.asarray(v["A"], float), np.asarray(v["B"], float)
        assert np.any(A @ B != B @ A)
        want = B @ A if params.get("ask") == "BA" else A @ B - B @ A
        assert e == pytest.approx(want)
        assert np.any(np.asarray(e) != 0)
    elif kind == "composition":
        if params.get("mode", "compose") == "compose":
            S, T = np.asarray(v["S"], float), np.asarray(v["T"], float)
            x = np.array([1.0, 2.0])
            assert e @ x == pytest.approx(S @ (T @ x))
            assert np.any(S @ T != T @ S)
        else:
            A, B, C = (np.asarray(v[k], float) for k in "ABC")
            assert e == pytest.approx(A @ (B @ C))
    elif kind == "transpose":
        prop = params.get("property", "plain")
        if prop == "rotation":
            assert e == pytest.approx(np.eye(2), abs=1e-12)
            t = math.radians(v["angle"])
            assert np.asarray(v["R"]) == pytest.approx(
                np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]]), abs=1e-3
            )
        elif prop == "rotation_undo":
            t = math.radians(v["angle"])
            R = np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])
            y = np.asarray(v["y"], float)
            assert e == pytest.approx(np.linalg.solve(R, y))  # the x with Rx = y (as shown)
            assert e == pytest.approx(np.round(e), abs=1e-3)  # a whole-number vector, rounded y
            assert v["angle"] != 180 and np.all(np.round(e) != 0)
            assert set(g.detectors) == {"rotation_not_inverted", "rotation_ignored"}
        elif prop == "product":
            A, B = np.asarray(v["A"], float), np.asarray(v["B"], float)
            assert e == pytest.approx(B.T @ A.T)
        else:
            A = np.asarray(v["A"], float)
            want = A.T if prop == "plain" else A
            assert np.asarray(e).shape == want.shape
            assert e == pytest.approx(want)
    elif kind == "inverse":
        A = np.asarray(v["A"], float)
        assert A @ e == pytest.approx(np.eye(A.shape[0]), abs=1e-9)
        assert np.allclose(e * 100, np.round(e * 100), atol=1e-9), "nice (2-decimal) entries"
    elif kind == "softmax":
        x = np.atleast_2d(np.asarray(v["x"], float))
        want = loop_softmax_rows(x).reshape(np.shape(e))
        assert e == pytest.approx(want)
        eps = 10.0**-dec
        assert np.all(want >= eps) and np.all(want <= 1 - eps), "softmax saturates"
        if params.get("shift"):
            assert np.min(x) > params["shift"] - 10
    elif kind in ("retrieval_scores",):
        Q, K = np.asarray(v["Q"], float), np.asarray(v["K"], float)
        S = np.array([[sum(q * k) for k in K] for q in Q])
        want = S if params.get("ask", "scores") == "scores" else S / math.sqrt(K.shape[1])
        assert e == pytest.approx(want)
        assert g.answer_form.row_labels and g.answer_form.col_labels
    elif kind == "retrieval_rank":
        Q, K = np.asarray(v["Q"], float), np.asarray(v["K"], float)
        assert g.answer_form.col_labels == g.answer_form.choices
        S = Q @ K.T
        i = ctx["query_row"]
        assert f"| **{v['query']}** |" in v["Q_table"].splitlines()[2 + i]
        assert int(np.argmax(S[i])) + 1 == e
        top2 = np.sort(S[i])[-2:]
        assert top2[1] - top2[0] >= params.get("margin", 1.0), "a tie for first place"
    elif kind in ("attention", "attention_fill"):
        ask = params.get(
            "ask", params.get("target", "output" if kind == "attention" else "weights")
        )
        out, W = loop_attention(v["Q"], v["K"], v["V"])
        want = {"weights": W, "output": out}.get(ask)
        if ask == "scaled":
            Q, K = np.asarray(v["Q"], float), np.asarray(v["K"], float)
            want = Q @ K.T / math.sqrt(K.shape[1])
        assert e == pytest.approx(want)
        eps = 10.0**-dec
        assert np.all(W >= eps) and np.all(W <= 1 - eps), "attention weights saturate"
        if kind == "attention_fill":
            mask = ctx["mask"]
            given = g.answer_form.given
            assert int(mask.sum()) == params.get("blanks", 3)
            for i, row in enumerate(given):
                for j, cell in enumerate(row):
                    assert (cell is None) == bool(mask[i, j])
                    if cell is not None:
                        assert float(cell) == pytest.approx(e[i, j], abs=10.0**-dec)
    elif kind == "self_attention":
        X = np.asarray(v["X"], float)
        Q, K, V = (X @ np.asarray(v[w], float) for w in ("W_Q", "W_K", "W_V"))
        out, W = loop_attention(Q, K, V)
        assert e == pytest.approx(out if params.get("ask", "output") == "output" else W)
        eps = 10.0**-dec
        assert np.all(W >= eps) and np.all(W <= 1 - eps)
    elif kind == "attention_argmax":
        _, W = loop_attention(v["Q"], v["K"], None)
        toks = g.answer_form.choices
        i = toks.index(v["token"])
        top2 = np.sort(W[i])[-2:]
        assert int(np.argmax(W[i])) + 1 == e
        assert top2[1] - top2[0] >= params.get("margin", 0.05), "a near tie"
    elif kind == "multi_head_attention":
        X = np.asarray(v["X"], float)
        h, dk, dv = v["heads"], v["d_k"], v["d_v"]
        WQ, WK, WV, WO = (np.asarray(v[w], float) for w in ("W_Q", "W_K", "W_V", "W_O"))
        heads = []
        for i in range(h):
            out, W = loop_attention(
                X @ WQ[:, i * dk : (i + 1) * dk],
                X @ WK[:, i * dk : (i + 1) * dk],
                X @ WV[:, i * dv : (i + 1) * dv],
            )
            assert np.all(W >= 0.01) and np.all(W <= 0.99)
            heads.append(out)
        concat = np.hstack(heads)
        want = concat @ WO if params.get("ask", "output") == "output" else concat
        assert e == pytest.approx(want)
    elif kind in IDEAS:
        IDEAS[kind](g, params)
    else:  # pragma: no cover - a new kind must get a check here
        raise AssertionError(f"no well-posedness check for kind {kind!r}")


@pytest.mark.parametrize("label,kind,params", CASES, ids=[c[0] for c in CASES])
def test_kind_is_deterministic_and_well_posed(label: str, kind: str, params: dict) -> None:
    seen = set()
    for seed in SEEDS:
        g = gen(kind, params, seed)
        check_well_posed(kind, params, g)
        assert g.solution, "every variant has a worked solution"
        assert all(step.title and step.text for step in g.solution)
        if seed < 5:
            again = gen(kind, params, seed)
            assert repr(again.values) == repr(g.values)
            for a, b in zip([again, *again.parts], [g, *g.parts], strict=True):
                if not isinstance(a.expected, dict):
                    assert np.array_equal(np.asarray(a.expected), np.asarray(b.expected))
        seen.add(repr(g.values))
    assert len(seen) > 1, "variants must vary"


def test_every_kind_has_a_well_posedness_check() -> None:
    for name in all_kinds():
        if name == "expression":
            continue
        check_well_posed(name, {}, gen(name, {}, 0))


def test_worked_solutions_show_intermediate_values() -> None:
    g = gen("attention", {"ask": "output"}, 1)
    titles = [s.title for s in g.solution]
    assert titles == ["Scores QKᵀ", "Scale by √d", "Softmax of each row", "Multiply by V"]
    Q, K, V = (np.asarray(g.values[k], float) for k in "QKV")
    assert g.solution[0].value == pytest.approx(Q @ K.T)
    assert g.solution[1].value == pytest.approx(Q @ K.T / 2, abs=1e-4)
    assert g.solution[2].heatmap
    assert g.solution[3].value == pytest.approx(g.expected, abs=1e-4)


def test_the_decks_system_is_reachable() -> None:
    systems = set()
    for seed in range(20):
        g = gen("linear_system", {"fixed": {"A": [[5, 1], [3, 2]], "y": [15, 16]}}, seed)
        assert g.expected == pytest.approx([2, 5])
        assert "5x + y &= 15" in g.values["system"] and "3x + 2y &= 16" in g.values["system"]
        systems.add(g.values["system"])
    assert len(systems) == 2  # the two equations in either order
    equations = {gen("line_points", {"fixed": [5, 1, 15]}, s).values["equation"] for s in range(20)}
    assert equations == {"5x + y = 15", "y + 5x = 15"}


@pytest.mark.parametrize(
    "kind,params,words",
    [
        ("linear_system", {"fixed": {"A": [[1, 2], [2, 4]], "y": [1, 2]}}, ["singular"]),
        ("linear_system", {"coefficients": [6, -6]}, ["reversed"]),
        ("linear_system", {"size": 9}, ["size"]),
        ("matrix_product", {"shape_a": [2, 3], "shape_b": [2, 3]}, ["chain"]),
        ("softmax", {"shape": [1, 2, 3]}, ["shape"]),
        ("line_points", {"fixed": [0, 1, 3]}, ["non-zero"]),
        ("transpose", {"property": "plain", "rows": 3, "columns": 3}, ["differ"]),
        ("attention", {"colour": "red"}, ["colour"]),
        ("attention_fill", {"queries": 2, "keys": 2, "blanks": 4}, ["blanks", "fewer"]),
        ("inverse", {"determinants": [0]}, ["positive"]),
        ("matrix_vector", {"rows": 3, "columns": 3}, ["differ"]),
    ],
)
def test_bad_params_get_a_clear_message(kind: str, params: dict, words: list[str]) -> None:
    with pytest.raises(ValidationError) as info:
        get_kind(kind).Params.model_validate(params)
    text = str(info.value).lower()
    for w in words:
        assert w in text


def test_impossible_params_say_so() -> None:
    from quizapp.bank.kinds._util import ImpossibleParams

    with pytest.raises(ImpossibleParams, match="widen"):
        gen("linear_equation", {"coefficient": [1, 1]}, 0)


def test_kinds_subclass_the_contract() -> None:
    for name, k in all_kinds().items():
        if name == "expression":
            continue
        assert k.name == name
        assert issubclass(k.Params, KindParams)


def test_dot_product_scale_revision_2_is_nearest_by_plain_difference_too() -> None:
    """Revision 2 of ``dot_product_scale``: the prompt asks which option the average square is
    closest to, so the right option is the nearest by plain difference as well as on a log scale
    (revision 1 drew, e.g., d = 49 with an average square near 27.7: nearer √d = 7)."""
    kind = get_kind("dot_product_scale")
    assert kind.revision >= 2
    latest = kind.params_at(kind.Params.model_validate({}), kind.revision)
    first = kind.params_at(kind.Params.model_validate({}), 1)
    assert latest.nearest == "both" and first.nearest == "log"

    def plain_nearest(g: Generated) -> float:
        shown, d = np.asarray(g.context["shown"], float), g.context["d"]
        mean_square = sum(v * v for v in shown) / len(shown)
        return min((1.0, math.sqrt(d), float(d), float(d * d)), key=lambda t: abs(mean_square - t))

    misses_before = 0
    for seed in range(1500):
        g = kind.generate(latest, np.random.default_rng(seed))
        check_dot_scale(g, {})
        d = g.context["d"]
        assert plain_nearest(g) == (1.0 if g.context["scaled"] else float(d)), seed
        old = kind.generate(first, np.random.default_rng(seed))
        misses_before += plain_nearest(old) != (1.0 if old.context["scaled"] else old.context["d"])
    assert misses_before > 0  # the fault revision 2 removes was there in revision 1's draws
