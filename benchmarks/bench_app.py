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


def main(argv: list[str] | None = None) -> None:
    """Serve ``create_bench_app()`` on gunicorn with exactly ``quizapp serve``'s settings
    (``quizapp.cli.server.gunicorn_options``: its read-timeout gthread worker, keep-alive,
    timeouts, access log on stdout), so the benchmark measures what ``quizapp serve`` runs.

    ``python -m benchmarks.bench_app --port P [--workers N] [--threads N] [--timeout 30]
    [--worker-class sync] [--profile-dir DIR]`` (workers and threads: ``quizapp serve``'s
    defaults); ``--worker-class`` (default: ``quizapp
    serve``'s) exists only to compare worker classes; ``--profile-dir`` wraps the worker class in
    ``benchmarks.profile_submit.profiling_worker`` (pyinstrument, while a flag file says so).
    """
    import argparse

    from quizapp.cli.server import (
        DEFAULT_THREADS,
        DEFAULT_WORKERS,
        _GunicornApp,
        gunicorn_options,
    )

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS)
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS)
    parser.add_argument("--timeout", type=int, default=30)
    parser.add_argument("--worker-class", default=None)
    parser.add_argument("--profile-dir", default=None)
    args = parser.parse_args(argv)
    options = gunicorn_options(args.host, args.port, args.workers, args.threads, args.timeout)
    if args.worker_class:
        options["worker_class"] = args.worker_class
    if args.profile_dir:
        from pathlib import Path

        from benchmarks.profile_submit import profiling_worker

        options["worker_class"] = profiling_worker(options["worker_class"], Path(args.profile_dir))
    _GunicornApp(create_bench_app(), options).run()


if __name__ == "__main__":
    main()
