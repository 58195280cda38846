"""Unicode look-alikes mapped to the ASCII answer grammar: dashes, times and division signs,
superscript powers (``10⁻³``), vulgar fractions (``½``), full-width digits, invisible characters.
Subscript digits, mixed numbers (``1½``) and a raised dot between digits are refused with a
message, because Unicode normalization would silently turn them into other numbers."""

from __future__ import annotations

import re
import unicodedata

from quizapp.grading.parse.errors import InvalidAnswer

_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2796\ufe58\ufe63\uff0d"
_TIMES = "\u00d7\u00b7\u22c5\u2217\u2219\u2715\u2716\u2a09"
_DIVIDE = "\u00f7\u2215\u2044\u2236"
_SUPERSCRIPTS = {
    "\u2070": "0",
    "\u00b9": "1",
    "\u00b2": "2",
    "\u00b3": "3",
    "\u2074": "4",
    "\u2075": "5",
    "\u2076": "6",
    "\u2077": "7",
    "\u2078": "8",
    "\u2079": "9",
    "\u207a": "+",
    "\u207b": "-",
}
_SUPERSCRIPT_RUN = re.compile("[" + "".join(_SUPERSCRIPTS) + "]+")
_TRANSLATE = {ord(c): "-" for c in _DASHES}
_TRANSLATE.update({ord(c): "*" for c in _TIMES})
_TRANSLATE.update({ord(c): "/" for c in _DIVIDE})
#: Circumflex look-alikes phone and desktop keyboards produce for "^": the modifier letter
#: circumflex (U+02C6, iOS), the modifier up arrowhead (U+02C4), the caret (U+2038) and the up
#: arrowhead (U+2303).  (The full-width circumflex U+FF3E becomes "^" by NFKC.)
_CARETS = "\u02c6\u02c4\u2038\u2303"
_TRANSLATE.update({ord(c): "^" for c in _CARETS})
_TRANSLATE.update({ord("\u03c0"): "pi", ord("\u221e"): "inf", ord("\r"): "\n"})
_TRANSLATE.update({ord("\u2028"): "\n", ord("\u2029"): "\n"})
# "1.5x10^3" / "1.5 X 10^3": the letter x used as a times sign before a power of ten.
_X_TIMES_TEN = re.compile(r"(?<=[0-9.])\s*[xX]\s*(?=10\s*(\^|\*\*))")


_SUBSCRIPT = re.compile("[\u2080-\u208e]")
# "1·5" is a decimal in older British typography and a product elsewhere; "1.5·10^3" is fine.
_MIDDLE_DOT_DECIMAL = re.compile(
    r"(?<=[0-9])\u00b7(?=[0-9])(?!10\s*(\^|\*\*|[\u00b2\u00b3\u00b9\u2070-\u207b]))"
)
_VULGAR = re.compile("[\u00bc-\u00be\u2150-\u215e\u2189]")


def _vulgar_fraction(m: re.Match[str]) -> str:
    """``½`` -> ``(1/2)``; refuse ``1½`` (NFKC would make it 11/2, a product would make it 1/2)."""
    fraction = unicodedata.normalize("NFKC", m[0]).replace("\u2044", "/")
    if m.start() > 0 and m.string[m.start() - 1].isdigit():
        whole = m.string[m.start() - 1]
        raise InvalidAnswer(
            f"Write a mixed number such as {whole}{m[0]} as {whole}+{fraction} (or as a decimal)."
        )
    return "(" + fraction + ")"


def _superscript_power(m: re.Match[str]) -> str:
    """``10⁻³`` -> ``10^(-3)``; a superscript with nothing before it to raise is refused."""
    before = m.string[: m.start()].rstrip()
    if not before or not (before[-1].isalnum() or before[-1] in ")}]"):
        raise InvalidAnswer(
            f"A superscript ({m[0]}) must follow the number it raises to a power, as in 10³; "
            "type plain digits otherwise."
        )
    return "^(" + "".join(_SUPERSCRIPTS[c] for c in m[0]) + ")"


def _normalize(text: str) -> str:
    """Map the Unicode look-alikes students type to the ASCII grammar; drop invisible characters.

    Raises :class:`InvalidAnswer` for subscript digits and mixed numbers such as ``1½``, which
    Unicode normalization would silently turn into other numbers.
    """
    if text.isascii():  # fast path: nothing to map but line ends and "1.5x10^3"
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        return _X_TIMES_TEN.sub("*", text) if "x" in text or "X" in text else text
    if _MIDDLE_DOT_DECIMAL.search(text):
        raise InvalidAnswer(
            "A raised dot between digits is ambiguous: write 1.5 for a decimal, or 1*5 for a product."
        )
    if _SUBSCRIPT.search(text):
        raise InvalidAnswer("Subscript digits are not allowed in an answer; type plain digits.")
    text = _VULGAR.sub(_vulgar_fraction, text)
    text = _SUPERSCRIPT_RUN.sub(_superscript_power, text)
    text = text.replace("\r\n", "\n")
    text = unicodedata.normalize("NFKC", text)
    out = []
    for ch in text.translate(_TRANSLATE):
        cat = unicodedata.category(ch)
        if ch in "\t\n":
            out.append(ch)
        elif cat == "Cf":  # zero-width spaces, byte-order marks, direction marks: invisible
            continue
        elif cat == "Zs":
            out.append(" ")
        elif ch.isdecimal() and not ch.isascii():
            out.append(str(unicodedata.decimal(ch)))
        else:
            out.append(ch)
    return _X_TIMES_TEN.sub("*", "".join(out))
