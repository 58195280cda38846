"""Building multiple-choice variants: options with their reasons, shuffled, each wrong option
with the mistake it stands for.

The conceptual kinds (true/false with reasons, "which of these could be the output", "which
matrix ...") all answer in the ``choice`` form: the student picks one option by its letter; the
worked solution says of every option why it is right or wrong; picking a wrong one names its
mistake (``context["choice_mistakes"]``, read by :mod:`quizapp.bank.answers`).  Not a kind module:
it registers nothing.  Pure (NumPy only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from quizapp.bank.formula import fraction_latex
from quizapp.bank.types import AnswerForm, Generated, SolutionStep

LETTERS = "abcdefgh"


@dataclass(frozen=True)
class Option:
    """One option: ``text`` as shown (Markdown with ``$...$``), whether it is the ``right`` one,
    ``why`` (Markdown, for the worked solution), and for a wrong option the mistake ``code`` and
    the plain-text ``message`` a student who picks it is told."""

    text: str
    right: bool
    why: str
    code: str = ""
    message: str = ""


def choice_variant(
    options: list[Option],
    rng: np.random.Generator | None,
    values: dict[str, Any],
    lead: list[SolutionStep] | None = None,
    close: list[SolutionStep] | None = None,
    context: dict[str, Any] | None = None,
) -> Generated:
    """A ``choice`` variant from ``options`` (exactly one right), in a random order when ``rng``
    is given (else as listed).  Sets ``values["options"]`` (a Markdown list "**(a)** ...") and
    ``values["answer_letter"]``; the worked solution is ``lead``, one step per option, ``close``.
    ``context``: what the kind drew (the matrices, the case), kept with the variant.
    Raises ``ValueError`` unless exactly one option is right and every wrong one has a code."""
    if sum(o.right for o in options) != 1:
        raise ValueError("a choice needs exactly one right option")
    if any(not o.right and not (o.code and o.message) for o in options):
        raise ValueError("every wrong option names its mistake")
    order = (
        list(range(len(options)))
        if rng is None
        else [int(i) for i in rng.permutation(len(options))]
    )
    shown = [options[i] for i in order]
    right = next(i for i, o in enumerate(shown) if o.right)
    steps = list(lead or [])
    for i, o in enumerate(shown):
        verdict = "right" if o.right else "wrong"
        why = o.why[:1].upper() + o.why[1:] if o.why[:1].isalpha() else o.why
        steps.append(SolutionStep(f"Option ({LETTERS[i]})", f"{o.text} — **{verdict}**. {why}"))
    steps.extend(close or [])
    mistakes = {
        i: (o.code, f"Option ({LETTERS[i]}): {o.message}")
        for i, o in enumerate(shown)
        if not o.right
    }
    return Generated(
        values={
            **values,
            "options": "\n".join(f"- **({LETTERS[i]})** {o.text}" for i, o in enumerate(shown)),
            "answer_letter": LETTERS[right],
        },
        expected=right,
        answer_form=AnswerForm(type="choice", shape=None, choices=[o.text for o in shown]),
        solution=steps,
        context={**(context or {}), "family": "choice", "choice_mistakes": mistakes},
        detectors=(),
    )


def frac_text(x: float, limit: int = 100) -> str:
    """A simple fraction or integer as LaTeX (``\\frac{3}{5}``, ``-2``); else 4 significant."""
    return fraction_latex(x, limit) or f"{float(x):.4g}"


def frac_matrix(a: Any, limit: int = 100) -> str:
    """A matrix (or a vector, as a column) of simple fractions as a LaTeX ``pmatrix``."""
    x = np.asarray(a, dtype=float)
    if x.ndim == 1:
        x = x.reshape(-1, 1)
    rows = [" & ".join(frac_text(v, limit) for v in row) for row in x]
    return r"\begin{pmatrix} " + r" \\ ".join(rows) + r" \end{pmatrix}"
