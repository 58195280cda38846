"""The course's concepts: canonical ids that exercises list under ``concepts:``.

One entry per concept of the seed deck ("Some math behind large language models", M. Irvine,
2024) as listed in issue 3, and the ideas the course's second edition added (issue 16), in
course order.  Each has a line in the course map, ``docs/course.md``.  The bank must cover every one with at least one
exercise (``tests/test_bank_coverage.py``); the instructor's statistics group results by them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Concept:
    """A concept: stable ``id`` (lowercase, ``_``), a short ``title`` and a one-sentence
    ``description`` for students and instructors."""

    id: str
    title: str
    description: str


_ALL = [
    Concept(
        "one_equation_one_unknown",
        "One equation, one unknown",
        "Solve a linear equation such as 5x = 15 by undoing what is done to x.",
    ),
    Concept(
        "one_equation_two_unknowns",
        "One equation, two unknowns",
        "An equation such as 5x + y = 15 has infinitely many solutions (x, 15 - 5x), all on a line.",
    ),
    Concept(
        "two_equations_two_unknowns",
        "Two equations, two unknowns",
        "Two independent linear equations such as 5x + y = 15 and 3x + 2y = 16 have exactly one "
        "common solution.",
    ),
    Concept(
        "solution_count",
        "One, none or infinitely many solutions",
        "Two equations in two unknowns have one solution when det A ≠ 0; when det A = 0 the "
        "lines are parallel (no solution) or the same line (infinitely many).",
    ),
    Concept(
        "system_as_matrix_equation",
        "Writing a system as Ax = y",
        "Collect the coefficients of a linear system into a matrix A and the right-hand sides into "
        "a vector y.",
    ),
    Concept(
        "basis_test",
        "Is it a basis?",
        "n vectors form a basis of R^n when none is a combination of the others: the matrix "
        "with them as columns has det ≠ 0; fewer vectors cannot span, more cannot be "
        "independent.",
    ),
    Concept(
        "coordinates_in_basis",
        "Coordinates in a basis",
        "The coordinates of v in a basis are the coefficients c with v = c1 b1 + ... + cn bn.",
    ),
    Concept(
        "linearity",
        "Linear maps: additivity and homogeneity",
        "T is linear when T(u + v) = T(u) + T(v) and T(cu) = cT(u); decide it or use it to compute.",
    ),
    Concept(
        "matrix_of_linear_map",
        "The matrix of a linear map",
        "For fixed bases a linear map has a unique matrix; its columns are the images of the basis "
        "vectors.",
    ),
    Concept(
        "row_times_column",
        "Row times column",
        "A row vector times a column vector is one number: the sum of the products of the entries.",
    ),
    Concept(
        "matrix_times_vector",
        "Matrix times vector",
        "An m x n matrix times a vector of length n gives a vector of length m: each row times the "
        "vector.",
    ),
    Concept(
        "transpose",
        "Transpose and its properties",
        "Rows become columns; (A^T)^T = A, (AB)^T = B^T A^T and A^T A = I for a rotation.",
    ),
    Concept(
        "transpose_of_product",
        "The transpose of a product",
        "(AB)^T = B^T A^T: the order reverses, and A^T B^T often does not even have the right "
        "shape.",
    ),
    Concept(
        "composition_associativity",
        "Composition and associativity",
        "Applying T then S is the matrix ST; (AB)C = A(BC), so products can be grouped freely.",
    ),
    Concept(
        "non_commutativity",
        "Non-commutativity",
        "In general AB != BA: the order of a matrix product matters.",
    ),
    Concept(
        "inverse",
        "The inverse matrix",
        "A non-singular A has an inverse with A^{-1} A = I, which undoes the map.",
    ),
    Concept(
        "transpose_vs_inverse",
        "Transpose versus inverse",
        "A^T undoes A only when A^T A = I (a rotation or reflection): R^T(Rx) = x, but for "
        "most A, A^T(Ax) ≠ x.",
    ),
    Concept(
        "retrieval_scores",
        "Retrieval scores QK^T",
        "Row i, column j of QK^T scores how well query i (e.g. “dog”) matches keyword j (e.g. "
        "“pet tips”).",
    ),
    Concept(
        "scaling_by_sqrt_d",
        "Scaling by √d",
        "Dividing the scores by the square root of the key dimension d keeps them from growing "
        "with d.",
    ),
    Concept(
        "dot_product_variance",
        "Why √d: the variance of a dot product",
        "For q and k with independent entries of mean 0 and variance 1, q·k has variance d: "
        "its typical size grows like √d, and dividing by √d brings it back to 1.",
    ),
    Concept(
        "softmax_vector",
        "Softmax of a vector",
        "softmax(x)_i = exp(x_i) / sum_j exp(x_j): positive weights that sum to 1.",
    ),
    Concept(
        "softmax_rows",
        "Row-wise softmax of a matrix",
        "For a score matrix the softmax is taken along each row, so each query's weights sum to 1.",
    ),
    Concept(
        "softmax_shift_invariance",
        "Shift invariance of softmax",
        "Adding the same constant to every entry leaves the softmax unchanged (so subtract the "
        "maximum).",
    ),
    Concept(
        "softmax_temperature",
        "Temperature and saturation",
        "softmax(cx) for a large c is nearly one-hot (saturated), for a small c nearly uniform: "
        "the scale of the scores decides how sharply attention picks.",
    ),
    Concept(
        "softmax_properties",
        "Properties of softmax",
        "Softmax weights are positive, sum to 1, keep the order of the scores and do not change "
        "when a constant is added; scaling the scores does change them.",
    ),
    Concept(
        "token_embeddings",
        "Embeddings as rows of a matrix",
        "Each token is a row of an embedding matrix E; the dot products EE^T compare every pair "
        "of tokens, the same row-times-column products that give QK^T.",
    ),
    Concept(
        "embedding_lookup",
        "An embedding lookup",
        "A one-hot row vector times the embedding matrix E picks out one row of E: the token's "
        "embedding.",
    ),
    Concept(
        "cosine_similarity",
        "Dot product versus cosine similarity",
        "The dot product grows with the vectors' lengths; the cosine q·k / (|q||k|) compares "
        "only their directions, so the two can rank keys differently.",
    ),
    Concept(
        "attention",
        "Scaled dot-product attention",
        "softmax(QK^T / √d) V: each output row is a weighted average of the rows of V.",
    ),
    Concept(
        "attention_weighted_average",
        "Outputs are weighted averages of values",
        "Each output row is a weighted average of the rows of V with positive weights summing "
        "to 1, so every entry lies between that column's smallest and largest value.",
    ),
    Concept(
        "causal_mask",
        "The causal mask",
        "In a decoder a token may not attend to later tokens: their scores are set to -∞ "
        "before the softmax, so each row's weights over the earlier tokens still sum to 1.",
    ),
    Concept(
        "self_attention",
        "Self-attention",
        "Queries, keys and values all come from the same tokens: Q = XW_Q, K = XW_K, V = XW_V.",
    ),
    Concept(
        "attention_argmax",
        "Which token attends most to which",
        "Read a row of the attention weights to see which token a token attends to most.",
    ),
    Concept(
        "attention_in_a_sentence",
        "What “it” attends to",
        "In “The animal didn't cross the street because it was too tired” the query of “it” "
        "matches the key of “animal” best: attention resolves what a word refers to.",
    ),
    Concept(
        "multi_head_attention",
        "Multi-head attention",
        "Split the projections into heads, attend per head, concatenate the heads and multiply by "
        "W_O.",
    ),
    Concept(
        "attention_shapes",
        "Shapes and parameter counts",
        "With n tokens, d_model, h heads and d_k = d_model / h: Q, K, V are n × d_k per head, "
        "W_Q, W_K, W_V are d_model × d_k per head, and W_O maps h·d_v back to d_model.",
    ),
    Concept(
        "attention_fill",
        "Filling in attention outputs",
        "Complete a partly given attention weight or output matrix from its definition.",
    ),
]

#: id -> concept, in course order.
CONCEPTS: dict[str, Concept] = {c.id: c for c in _ALL}


def concept_ids() -> list[str]:
    """Every concept id, in course order."""
    return list(CONCEPTS)


def get_concept(concept_id: str) -> Concept:
    """The concept with ``concept_id``.  Raises ``KeyError`` with the known ids if there is none."""
    try:
        return CONCEPTS[concept_id]
    except KeyError:
        raise KeyError(f"unknown concept {concept_id!r}; known: {', '.join(CONCEPTS)}") from None
