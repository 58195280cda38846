"""The app the HTTP benchmarks serve: quizapp's ``create_app()`` plus ``/bench/ok``.

``/bench/ok`` is a bare Flask route returning ``ok``: the baseline of the submit endpoint's
throughput, on the same app (same extensions, same ``after_request`` security headers), the same
gunicorn settings and the same machine.  It exists only here, in the benchmarks' own app factory;
the production app (``quizapp.web.create_app``) never has it.  Configuration comes from the
environment as in production (``QUIZAPP_INSTANCE``, ``QUIZAPP_EXERCISES``, ``QUIZAPP_SECRET_KEY``,
``QUIZAPP_SEED_SECRET``, ``QUIZAPP_RATELIMIT=0``); the benchmark sets it.
"""

from __future__ import annotations

from flask import Flask

from quizapp.web import create_app


def create_bench_app() -> Flask:
    """quizapp's app with the extra benchmark-only route ``GET /bench/ok``."""
    app = create_app()

    @app.get("/bench/ok")
    def bench_ok() -> str:
        return "ok"

    return app
