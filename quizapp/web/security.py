"""Security headers and redirect-target checks.

The CSP allows scripts, styles and images from this origin only, with no inline script or style
(templates use static files and classes; SVG heatmaps use presentation attributes).  Framing is
denied twice (``frame-ancestors`` for current browsers, ``X-Frame-Options`` for old ones).
"""

from __future__ import annotations

from typing import TypeGuard
from urllib.parse import urlsplit

from flask import Flask, Response, request

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


def is_safe_next(target: str | None) -> TypeGuard[str]:
    """True if ``target`` is a same-site relative path (``/...``) safe to redirect to after login.

    Rejects absolute URLs, scheme-relative ``//host``, backslash tricks (``/\\host``, which
    browsers treat as ``//host``), and control characters.
    """
    if not target or not isinstance(target, str) or len(target) > 2000:
        return False
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return False
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in target):
        return False
    parts = urlsplit(target)
    return not parts.scheme and not parts.netloc


def _personal() -> bool:
    """True if the request was made as someone: a session user or an ``Authorization`` header."""
    from flask_login import current_user

    if request.headers.get("Authorization"):
        return True
    return bool(current_user and current_user.is_authenticated)


def register(app: Flask) -> None:
    """Add the security headers to every response; ``Cache-Control: no-store`` to every response
    for a signed-in user or a bearer token (a shared computer's browser cache, or a proxy, must
    not keep a student's page, answers or expected answers after they sign out)."""

    @app.after_request
    def _headers(response: Response) -> Response:
        if request.endpoint != "static" and _personal():
            response.headers["Cache-Control"] = "no-store"
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        response.headers.setdefault("Cross-Origin-Opener-Policy", "same-origin")
        if app.config.get("QUIZAPP_HTTPS"):
            response.headers.setdefault(
                "Strict-Transport-Security", "max-age=31536000; includeSubDomains"
            )
        return response
