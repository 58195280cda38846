"""Per-student seeds: reproducible forever, unpredictable without the server secret."""

from __future__ import annotations

import hashlib
import hmac


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
