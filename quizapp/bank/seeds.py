"""Per-student seeds: reproducible forever, unpredictable without the server secret."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def derive_seed(secret: str | bytes, user_id: int, exercise_id: str, variant_number: int) -> int:
    """The seed of a student's ``variant_number``-th variant of an exercise, in ``[0, 2**63)``.

    HMAC-SHA256 (RFC 2104) keyed with the server ``secret`` over the message
    ``"quizapp-seed-v1\\x1f{user_id}\\x1f{exercise_id}\\x1f{variant_number}"`` (unit-separator
    delimited, so no two argument tuples share a message); the first 8 bytes of the digest,
    big-endian, with the top bit cleared.  Stable across machines and Python versions, so a
    stored (user, exercise, variant number) always maps to the same variant; without the secret
    a student cannot predict another student's numbers.  Raises ``ValueError`` for an empty
    secret, a negative user id or variant number.
    """
    if isinstance(secret, str):
        secret = secret.encode("utf-8")
    if not secret:
        raise ValueError("derive_seed needs a non-empty secret")
    if int(user_id) < 0 or int(variant_number) < 0:
        raise ValueError("user_id and variant_number must be non-negative")
    message = f"quizapp-seed-v1\x1f{int(user_id)}\x1f{exercise_id}\x1f{int(variant_number)}"
    digest = hmac.new(secret, message.encode("utf-8"), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


#: Derived seeds tried after a student's own seed fails to produce a variant (see
#: :func:`first_working_seed`).  A kind whose draws fail that often is broken, not unlucky.
MAX_FALLBACKS = 16


def fallback_seed(seed: int, k: int) -> int:
    """The ``k``-th (1-based) fallback of ``seed``, in ``[0, 2**63)``: the first 8 bytes of
    SHA-256 over ``"quizapp-fallback-v1\\x1f{seed}\\x1f{k}"``, top bit cleared.  Deterministic, so
    the same student on the same exercise always falls back to the same variant."""
    if int(seed) < 0 or int(k) < 1:
        raise ValueError("fallback_seed needs a seed >= 0 and k >= 1")
    digest = hashlib.sha256(f"quizapp-fallback-v1\x1f{int(seed)}\x1f{int(k)}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


def first_working_seed(
    make: Callable[[int], T], seed: int, tries: int = MAX_FALLBACKS
) -> tuple[T, int, list[tuple[int, str]]]:
    """``(make(s), s, failures)`` for the first ``s`` of ``seed``, ``fallback_seed(seed, 1)``,
    ... ``fallback_seed(seed, tries)`` for which ``make`` does not raise; ``failures`` lists the
    ``(seed, message)`` of the ones that raised.  Raises :class:`NoWorkingSeed` (with the
    failures) when all ``tries + 1`` seeds fail."""
    failures: list[tuple[int, str]] = []
    candidates = [int(seed)] + [fallback_seed(seed, k) for k in range(1, tries + 1)]
    for candidate in candidates:
        try:
            return make(candidate), candidate, failures
        except Exception as exc:  # noqa: BLE001 - any failure of one seed: try the next
            failures.append((candidate, str(exc) or type(exc).__name__))
    raise NoWorkingSeed(failures)


class NoWorkingSeed(Exception):
    """No seed of :func:`first_working_seed` produced a variant; ``failures`` says why each
    failed."""

    def __init__(self, failures: list[tuple[int, str]]) -> None:
        self.failures = failures
        first = failures[0][1] if failures else "no seed tried"
        super().__init__(f"{len(failures)} seeds failed to generate (the first: {first})")
