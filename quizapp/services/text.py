"""Text checks shared by the services: what a page, a CSV or a database column cannot carry."""

from __future__ import annotations

import logging
import re
import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


log = logging.getLogger(__name__)

#: Characters no page or CSV may carry as is: C0 controls other than tab/newline/CR, DEL, C1
#: controls, and lone UTF-16 surrogates (which cannot be encoded as UTF-8 at all).
_UNSHOWABLE_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def _show_char(match: re.Match[str]) -> str:
    ch = match.group(0)
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)  # Unicode "Control Pictures": NUL -> U+2400 '␀', ...
    if code == 0x7F:
        return "\u2421"  # '␡'
    return "\ufffd"  # C1 controls and lone surrogates: the replacement character


def printable_text(text: str) -> str:
    """``text`` with every character a page or CSV file cannot show replaced by a visible stand-in.

    C0 controls (except tab, newline, carriage return) become their Unicode Control Picture
    (NUL -> U+2400 '␀', U+0001 -> U+2401, ...), DEL becomes U+2421, C1 controls and lone
    surrogates (``"\\ud800"``, valid in JSON but not encodable as UTF-8) become U+FFFD.  Everything
    else is returned unchanged, so the result always encodes as UTF-8.  Stored answers keep their
    exact text; this is for output only (Jinja's ``finalize`` and the CSV writers use it).
    """
    if not isinstance(text, str) or not _UNSHOWABLE_RE.search(text):
        return text
    return _UNSHOWABLE_RE.sub(_show_char, text)


#: Bidirectional formatting characters (embeddings, overrides, isolates, marks): in a name they
#: reorder the text around it on the page (e.g. a right-to-left override spoofs the next column).
BIDI_CONTROLS = frozenset(
    "\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
DISPLAY_NAME_MAX = 120


def name_problem(text: str, what: str) -> str | None:
    """Why ``text`` cannot be a user's ``what`` (a username or display name), or None if it can.

    Refused: control characters (category Cc, e.g. NUL, which some databases silently truncate
    at), lone surrogates, bidirectional controls (``BIDI_CONTROLS``) and other invisible format
    characters (category Cf, e.g. zero-width space), which make one name look like another.
    """
    for i, ch in enumerate(text, start=1):
        cat = unicodedata.category(ch)
        if ch in BIDI_CONTROLS:
            return (
                f"The {what} contains a right-to-left/left-to-right control character "
                f"(U+{ord(ch):04X}, position {i}); remove it."
            )
        if cat in ("Cc", "Cs", "Cf", "Co", "Cn"):
            kind = {
                "Cc": "a control character",
                "Cs": "an invalid character (a lone surrogate)",
                "Cf": "an invisible formatting character",
                "Co": "a private-use character",
                "Cn": "an unassigned character",
            }[cat]
            return f"The {what} contains {kind} (U+{ord(ch):04X}, position {i}); remove it."
    return None


def db_safe(text: str) -> bool:
    """False if ``text`` holds characters a database text column cannot store (NUL, surrogates)."""
    return "\x00" not in text and not any("\ud800" <= ch <= "\udfff" for ch in text)


def counted(n: int, word: str, plural: str | None = None) -> str:
    """``n`` and ``word`` in its number: ``1 exercise``, ``2 exercises`` (``plural``: when
    not ``word + "s"``, e.g. ``quizzes``, ``verdicts``)."""
    return f"{n} {word if n == 1 else (plural or word + 's')}"
