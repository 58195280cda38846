"""The course's concepts: canonical ids that exercises list under ``concepts:``.

One entry per concept of the seed deck ("Some math behind large language models", M. Irvine,
2024) as listed in issue 3, in course order.  The bank must cover every one with at least one
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
        "system_as_matrix_equation",
        "Writing a system as Ax = y",
        "Collect the coefficients of a linear system into a matrix A and the right-hand sides into "
        "a vector y.",
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
        "attention",
        "Scaled dot-product attention",
        "softmax(QK^T / √d) V: each output row is a weighted average of the rows of V.",
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
        "token_embeddings",
        "Embeddings as rows of a matrix",
        "Each token is a row of an embedding matrix E; the dot products EE^T compare every pair "
        "of tokens, the same row-times-column products that give QK^T.",
    ),
    Concept(
        "multi_head_attention",
        "Multi-head attention",
        "Split the projections into heads, attend per head, concatenate the heads and multiply by "
        "W_O.",
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
