"""Static files: fingerprinted URLs with long cache lifetimes, and compressed responses.

- Every ``url_for('static', filename=...)`` gets ``?v=<hash>``, the first 12 hex digits of the
  SHA-256 of the file's content (so a page only ever names the version it was built with).  A
  request whose ``v`` is the file's current hash is answered ``Cache-Control: public,
  max-age=31536000, immutable``: the browser keeps it a year and never asks again; a changed file
  has a new URL.  Any other request of a static file (no ``v``, or an old one from a page cached
  before a deploy) gets ``no-cache`` and is revalidated, as before.  No build step: the hash is
  computed from the file on first use and cached by its modification time and size.
- Responses are compressed with Flask-Compress (zstd, brotli or gzip, as the browser accepts;
  HTML, CSS, JS, JSON and SVG of 500 bytes or more), unless ``QUIZAPP_COMPRESS`` is off (a proxy
  in front that compresses).  Pages carry a CSRF token: Flask-WTF signs it with a timestamp, so
  its text changes every second, which defeats the repeated-guess compression attacks (BREACH)
  that need a secret constant across many responses.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from flask import Flask, Response, request

#: Cache lifetime of a fingerprinted static file: one year, the longest RFC 9111 recommends.
IMMUTABLE = "public, max-age=31536000, immutable"

_hashes: dict[str, tuple[int, int, str]] = {}


def file_hash(app: Flask, filename: str) -> str | None:
    """The fingerprint of static file ``filename`` (12 hex digits of its SHA-256), or None when it
    does not exist.  Recomputed only when the file's modification time or size changes."""
    folder = app.static_folder
    if folder is None:
        return None
    path = Path(folder) / filename
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = str(path)
    cached = _hashes.get(key)
    if cached is not None and cached[:2] == (st.st_mtime_ns, st.st_size):
        return cached[2]
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    except OSError:
        return None
    _hashes[key] = (st.st_mtime_ns, st.st_size, digest)
    return digest


def init_app(app: Flask) -> None:
    """Fingerprint static URLs, cache fingerprinted files for a year, compress responses."""

    @app.url_defaults
    def _fingerprint(endpoint: str, values: dict[str, Any]) -> None:
        if endpoint == "static" and "v" not in values and "filename" in values:
            digest = file_hash(app, str(values["filename"]))
            if digest is not None:
                values["v"] = digest

    @app.after_request
    def _cache_static(response: Response) -> Response:
        if request.endpoint != "static" or response.status_code not in (200, 304):
            return response
        filename = (request.view_args or {}).get("filename")
        wanted = request.args.get("v")
        if wanted and filename and wanted == file_hash(app, str(filename)):
            response.headers["Cache-Control"] = IMMUTABLE
        else:
            response.headers["Cache-Control"] = "no-cache"
        return response

    if app.config.get("QUIZAPP_COMPRESS", True):
        from flask_compress import Compress

        # Static files are sent as streams; Flask-Compress leaves gzip out of its streaming
        # list by default, which would send them uncompressed to a gzip-only client.
        app.config.setdefault("COMPRESS_ALGORITHM_STREAMING", ["zstd", "br", "gzip", "deflate"])
        Compress(app)
