"""Figures 4 and 6: scoreboard and gradebook of a 10,000-student class; worker memory.

The class (10,000 students x 40 exercises x 3 submissions = 1.2 M submissions) is generated with
bulk SQL into a fresh SQLite database (migrated, the real bank synced, exercises past the first
40 archived), with the service layer's invariants: each (student, exercise) has variant 1, stored
(one variant drawn per exercise, its record and page shared by every student's row, with the
seed that drew it: drawing 400,000 distinct variants would take most of an hour and the
scoreboard and gradebook never read them), three graded submissions with attempt numbers 1..3 (only the last may be
correct, since nothing is accepted after a correct answer), and a progress row equal to what
``services.submit`` maintains: best score and points, attempts used, submission count, first
solve time, the time the best score was first reached, last activity; the variant's
``finished_at`` when solved or out of attempts.  A sample of progress rows is checked against
``services.recompute_progress``.

Timed (median of several runs): the scoreboard service call (``quizapp.instructor.scoreboard``,
first page of 50) and the HTTP page ``/instructor/scoreboard`` on gunicorn, against the bare SQL
aggregate (sum of ``best_points`` per student, ranked, first 50); the gradebook CSV service call
(``gradebook_csv(gradebook())``) and ``/instructor/gradebook.csv`` against a bare SQL read of the
same cells.  Memory: ``VmHWM`` of each gunicorn worker after serving those pages.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.common import (
    REPO,
    Gunicorn,
    Result,
    app_for,
    make_instance,
    median_time,
    rss_hwm_kib,
    session_cookie,
)

TARGET_SCOREBOARD_MS = 300.0
TARGET_GRADEBOOK_S = 3.0
TARGET_RSS_MB = 200.0
N_EXERCISES = 40
SUBMISSIONS_EACH = 3
USER_AGENT = "quizapp-benchmark"
#: Where generated classes are kept between runs (one SQLite file per cache key, see
#: :func:`cache_key`); ``QUIZAPP_BENCH_CACHE`` overrides it, ``QUIZAPP_BENCH_CACHE=off`` disables it.
CACHE_DIR = Path(tempfile.gettempdir()) / "quizapp-bench-scale-cache"

BARE_SCOREBOARD = """
SELECT user_id, round(sum(best_points), 6) AS points
FROM progress GROUP BY user_id ORDER BY points DESC, user_id LIMIT 50
"""
BARE_GRADEBOOK = """
SELECT u.username, p.exercise_id, p.best_points
FROM progress p JOIN users u ON u.id = p.user_id WHERE u.role = 'student'
ORDER BY u.username_key, p.exercise_id
"""


def _ts(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S.%f")


def generate_class(db_path: Path, n_students: int, seed_secret: str, rng: random.Random) -> float:
    """Insert the class with bulk SQL; return the seconds it took."""
    from quizapp.bank import derive_seed

    t0 = time.perf_counter()
    con = sqlite3.connect(db_path)
    # A bulk load: no journal, no fsync, and the secondary indexes of the big tables built once at
    # the end (their definitions read back from the schema the migrations created).
    con.execute("PRAGMA journal_mode = DELETE")
    con.execute("PRAGMA journal_mode = OFF")
    con.execute("PRAGMA synchronous = OFF")
    con.execute("PRAGMA cache_size = -200000")
    indexes = con.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
        "AND tbl_name IN ('submissions', 'variants', 'progress')"
    ).fetchall()
    for name, _ in indexes:
        con.execute(f'DROP INDEX "{name}"')
    exercises = con.execute(
        "SELECT e.id, e.points, e.attempts, v.id FROM exercises e "
        "JOIN quizzes q ON q.id = e.quiz_id "
        "JOIN exercise_versions v ON v.exercise_id = e.id AND v.content_hash = e.current_hash "
        "WHERE NOT e.archived AND NOT q.archived ORDER BY q.position, q.id, e.position, e.id"
    ).fetchall()
    assert len(exercises) >= N_EXERCISES, len(exercises)
    keep = [e[0] for e in exercises[:N_EXERCISES]]
    con.execute(
        f"UPDATE exercises SET archived = 1 WHERE id NOT IN ({','.join('?' * len(keep))})", keep
    )
    exercises = exercises[:N_EXERCISES]
    from quizapp.bank import load_exercise_source
    from quizapp.services.variants import draw_variant

    stored = {}
    for ex_id, _points, _attempts, version_id in exercises:
        source = con.execute(
            "SELECT source FROM exercise_versions WHERE id = ?", (version_id,)
        ).fetchone()[0]
        drawn = draw_variant(
            load_exercise_source(ex_id, source), derive_seed(seed_secret, 0, ex_id, 1)
        )
        record = json.dumps(drawn.record, allow_nan=False)
        stored[ex_id] = (drawn.seed, record, json.dumps(drawn.page), drawn.generator)
    hashed = "scrypt:32768:8:1$benchmark$" + "0" * 128  # never used to sign in
    start = datetime(2026, 9, 1, tzinfo=UTC)
    con.executemany(
        "INSERT INTO users (id, username, username_key, display_name, email, role, password_hash,"
        " active, created_at) VALUES (?, ?, ?, ?, ?, 'student', ?, 1, ?)",
        [
            (
                i,
                f"Student{i:05d}",
                f"student{i:05d}",
                f"Student {i}",
                f"s{i}@example.org",
                hashed,
                _ts(start),
            )  # fmt: skip
            for i in range(1, n_students + 1)
        ],
    )
    variants, subs, progress = [], [], []
    vid = sid = 0
    for uid in range(1, n_students + 1):
        skill = rng.random()
        for ex_id, points, attempts, version_id in exercises:
            vid += 1
            t = start + timedelta(days=rng.randrange(60), seconds=rng.randrange(86400))
            best = 0.0
            best_at = solved_at = finished_at = None
            for k in range(1, SUBMISSIONS_EACH + 1):
                sid += 1
                t = t + timedelta(seconds=30 + rng.randrange(600))
                if k == SUBMISSIONS_EACH and rng.random() < skill:
                    status, score = "correct", 1.0
                elif rng.random() < 0.5:
                    status, score = "partial", rng.choice((0.25, 0.5, 0.75))
                else:
                    status, score = "incorrect", 0.0
                pts = round(score * points, 6)
                verdict = {"status": status, "score": score, "message": "", "cells": None,
                           "mistakes": [], "parsed": [1.0, 2.0], "mistake_messages": []}  # fmt: skip
                subs.append(
                    (
                        sid,
                        vid,
                        uid,
                        ex_id,
                        version_id,
                        "text",
                        f"({k}, {uid})",
                        f"{sid:064x}",
                        "[1.0, 2.0]",
                        json.dumps(verdict),
                        status,
                        score,
                        pts,
                        "[]",
                        1,
                        k,
                        "web",
                        _ts(t),
                    )  # fmt: skip
                )
                if score > best or best_at is None:
                    best_at = t if score > best or best_at is None else best_at
                    best = max(best, score)
                if status == "correct" and solved_at is None:
                    solved_at = t
            if solved_at is not None or SUBMISSIONS_EACH >= attempts:
                finished_at = t
            variants.append(
                (
                    vid,
                    uid,
                    ex_id,
                    1,
                    stored[ex_id][0],
                    version_id,
                    _ts(start),
                    finished_at and _ts(finished_at),
                    *stored[ex_id][1:],
                    0,
                )  # fmt: skip
            )
            progress.append(
                (
                    uid,
                    ex_id,
                    best,
                    round(best * points, 6),
                    SUBMISSIONS_EACH,
                    SUBMISSIONS_EACH,
                    solved_at and _ts(solved_at),
                    _ts(best_at),
                    _ts(t),
                    1,
                )  # fmt: skip
            )
        if len(subs) >= 200_000 or uid == n_students:
            _flush(con, variants, subs, progress)
            variants, subs, progress = [], [], []
    # The scoreboard totals (score_totals) are not written here: forgetting the fingerprint they
    # were computed for makes the first scoreboard call rebuild them from the progress rows.
    con.execute("DELETE FROM score_totals_state")
    con.commit()
    for _, sql in indexes:
        con.execute(sql)
    con.execute("ANALYZE")
    con.commit()
    con.execute("PRAGMA journal_mode = WAL")  # as the app runs it
    con.close()
    return time.perf_counter() - t0


def _flush(con: sqlite3.Connection, variants: list, subs: list, progress: list) -> None:
    con.executemany(
        "INSERT INTO variants (id, user_id, exercise_id, variant_number, seed, version_id,"
        " created_at, finished_at, record, page, generator, seed_fallbacks)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        variants,
    )
    con.executemany(
        "INSERT INTO submissions (id, variant_id, user_id, exercise_id, version_id, answer_format,"
        " raw_answer, answer_hash, parsed, verdict, status, score, points, mistakes, used_attempt,"
        " attempt_number, source, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        subs,
    )
    con.executemany(
        "INSERT INTO progress (user_id, exercise_id, best_score, best_points, attempts_used,"
        " submissions_count, solved_at, best_reached_at, last_activity, current_variant)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        progress,
    )


def cache_key(n_students: int, seed_secret: str, rng_seed: int) -> str:
    """A hash of everything the generated database depends on.

    The Alembic migrations (the schema), the exercise bank as synced (every file's path and bytes),
    the source of the generator (:func:`generate_class`, :func:`_flush`) and of the service layer
    and models that sync the bank, the class size, the seed secret and the random seed.  Any change
    to one of them gives a new key, so a cached file is never reused for a different schema or
    class.
    """
    h = hashlib.sha256()
    h.update(f"{n_students}|{seed_secret}|{rng_seed}|{N_EXERCISES}|{SUBMISSIONS_EACH}".encode())
    h.update(inspect.getsource(generate_class).encode())
    h.update(inspect.getsource(_flush).encode())
    files = sorted((REPO / "migrations").rglob("*.py")) + sorted(
        p for p in (REPO / "exercises").rglob("*") if p.is_file()
    )
    files += [REPO / "quizapp" / name for name in ("models.py", "models_instructor.py")]
    files += sorted((REPO / "quizapp" / "services").rglob("*.py"))
    for path in files:
        h.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:24]


def _cache_dir() -> Path | None:
    value = os.environ.get("QUIZAPP_BENCH_CACHE", "")
    if value.lower() in ("off", "0", "no"):
        return None
    return Path(value) if value else CACHE_DIR


def prepare_class(
    env: dict[str, str], db_path: Path, n_students: int, rng_seed: int
) -> tuple[float, str]:
    """Create the class database at ``db_path``: a copy of the cached one for the same
    :func:`cache_key` if there is one, else synced and generated (and then cached).

    Returns (seconds the generation took, when it was done: "now" or "cached <path>").  Only
    the copy is used by the benchmark, so the cached file is never modified.
    """
    from quizapp import services
    from quizapp.models import db

    key = cache_key(n_students, env["QUIZAPP_SEED_SECRET"], rng_seed)
    cache = _cache_dir()
    cached = cache / f"scale-{n_students}-{key}.sqlite" if cache is not None else None
    meta = cached.with_suffix(".json") if cached is not None else None
    if cached is not None and meta is not None and cached.is_file() and meta.is_file():
        shutil.copyfile(cached, db_path)
        return float(json.loads(meta.read_text())["generation_s"]), f"cached {cached}"
    app = app_for(env)
    with app.app_context():
        report = services.sync_folder(db.session, REPO / "exercises")
        assert report.ok, report.summary()
        db.session.remove()
        db.engine.dispose()
    gen_s = generate_class(db_path, n_students, env["QUIZAPP_SEED_SECRET"], random.Random(rng_seed))
    with app.app_context():
        from quizapp.services import totals

        t0 = time.perf_counter()
        assert totals.ensure_current(db.session)  # score_totals built from the progress rows
        gen_s += time.perf_counter() - t0
        db.session.remove()
        db.engine.dispose()
    if cached is not None and meta is not None:
        assert not db_path.with_name(db_path.name + "-wal").exists()
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_name(f".{cached.name}.{os.getpid()}.partial")
        shutil.copyfile(db_path, partial)
        os.replace(partial, cached)
        meta.write_text(json.dumps({"generation_s": gen_s, "n_students": n_students}))
    return gen_s, "now"


def _check_invariants(app: Any, rng: random.Random, n_students: int) -> int:
    """Compare a sample of generated progress rows with ``services.recompute_progress``."""
    from quizapp import services
    from quizapp.models import Progress, db

    checked = 0
    with app.app_context():
        rows = db.session.query(Progress.user_id, Progress.exercise_id).all()
        for user_id, exercise_id in rng.sample(rows, min(20, len(rows))):
            before = db.session.query(Progress).filter_by(user_id=user_id,
                                                           exercise_id=exercise_id).one()  # fmt: skip
            fields = ("best_score", "best_points", "attempts_used", "submissions_count",
                      "solved_at", "best_reached_at", "last_activity")  # fmt: skip
            old = {f: getattr(before, f) for f in fields}
            after = services.recompute_progress(db.session, user_id, exercise_id)
            assert after is not None
            new = {f: getattr(after, f) for f in fields}
            assert old == new, (user_id, exercise_id, old, new)
            db.session.rollback()
            checked += 1
    return checked


def _get(url: str, cookie: str) -> bytes:
    req = urllib.request.Request(url, headers={"Cookie": f"session={cookie}",
                                               "User-Agent": USER_AGENT})  # fmt: skip
    with urllib.request.urlopen(req, timeout=120) as resp:
        assert resp.status == 200, resp.status
        return bytes(resp.read())


def run(quick: bool = False) -> list[Result]:
    from quizapp import instructor as inst
    from quizapp.models import db

    n_students = 200 if quick else 10_000
    repeat = 3 if quick else 7
    rng = random.Random(2027)
    with tempfile.TemporaryDirectory(prefix="quizapp-bench-scale-") as tmp:
        root = Path(tmp)
        db_path = root / "scale.sqlite"
        env = make_instance(root / "instance", REPO / "exercises", db_path)
        gen_s, when = prepare_class(env, db_path, n_students, 2026)
        app = app_for(env)
        from quizapp import services

        checked = _check_invariants(app, rng, n_students)
        with app.app_context():
            teacher = services.create_user(db.session, "teacher", "benchmark-password",
                                           role="instructor")  # fmt: skip
            cookie, _ = session_cookie(app, teacher, USER_AGENT)
            n_subs = db.session.execute(db.text("SELECT count(*) FROM submissions")).scalar()
            db.engine.dispose()

        con = sqlite3.connect(db_path)
        bare_sb = median_time(lambda: con.execute(BARE_SCOREBOARD).fetchall(), repeat=repeat)
        bare_gb = median_time(lambda: con.execute(BARE_GRADEBOOK).fetchall(), repeat=repeat)
        con.close()
        with app.app_context():
            inst.scoreboard(db.session)  # warm-up
            svc_sb = median_time(lambda: (inst.scoreboard(db.session), db.session.rollback()),
                                 repeat=repeat)  # fmt: skip
            board = inst.scoreboard(db.session)
            assert board.total == n_students and len(board.rows) == 50
            svc_gb = median_time(
                lambda: (inst.gradebook_csv(inst.gradebook(db.session)), db.session.rollback()),
                repeat=max(3, repeat // 2),
            )
            streamed = "".join(inst.iter_gradebook_csv(db.session))
            assert streamed == inst.gradebook_csv(inst.gradebook(db.session))
            db.session.rollback()
            svc_stream = median_time(
                lambda: (
                    sum(len(line) for line in inst.iter_gradebook_csv(db.session)),
                    db.session.rollback(),
                ),
                repeat=max(3, repeat // 2),
            )
            db.session.remove()
            db.engine.dispose()

        server = Gunicorn(env)
        try:
            _get(server.url + "/instructor/scoreboard", cookie)  # warm-up, both workers
            _get(server.url + "/instructor/scoreboard", cookie)
            http_sb = median_time(lambda: _get(server.url + "/instructor/scoreboard", cookie),
                                  repeat=repeat)  # fmt: skip
            csv_bytes = _get(server.url + "/instructor/gradebook.csv", cookie)
            assert csv_bytes.count(b"\n") == n_students + 1
            http_gb = median_time(lambda: _get(server.url + "/instructor/gradebook.csv", cookie),
                                  repeat=max(3, repeat // 2))  # fmt: skip
            pids = server.worker_pids()
            hwm = [rss_hwm_kib(p) or 0 for p in pids]
        finally:
            server.stop()
    cls = f"{n_students:,} students x {N_EXERCISES} x {SUBMISSIONS_EACH} ({n_subs:,} submissions)"
    return [
        Result(
            "4 scale",
            "scoreboard service call (page 1 of 50)",
            "ms",
            svc_sb * 1e3,
            TARGET_SCOREBOARD_MS,
            baseline=bare_sb * 1e3,
            baseline_name="bare SQL aggregate",
            note=f"{cls}; generated by bulk SQL in {gen_s:.0f} s"
            + ("" if when == "now" else " (a copy of the file cached by an earlier run)")
            + f", {checked} progress rows checked against recompute_progress",
        ),  # fmt: skip
        Result(
            "4 scale",
            "scoreboard HTTP page",
            "ms",
            http_sb * 1e3,
            TARGET_SCOREBOARD_MS,
            baseline=bare_sb * 1e3,
            baseline_name="bare SQL aggregate",
            note="GET /instructor/scoreboard, gunicorn, sequential requests",
        ),  # fmt: skip
        Result(
            "4 scale",
            "gradebook CSV service call",
            "s",
            svc_gb,
            TARGET_GRADEBOOK_S,
            baseline=bare_gb,
            baseline_name="bare SQL read of the cells",
        ),  # fmt: skip
        Result(
            "4 scale",
            "gradebook CSV streamed service call",
            "s",
            svc_stream,
            TARGET_GRADEBOOK_S,
            baseline=bare_gb,
            baseline_name="bare SQL read of the cells",
            note="iter_gradebook_csv, consumed line by line (what the download and "
            "export-grades use); same text as the in-memory gradebook_csv (asserted)",
        ),  # fmt: skip
        Result(
            "4 scale",
            "gradebook CSV HTTP download",
            "s",
            http_gb,
            TARGET_GRADEBOOK_S,
            baseline=bare_gb,
            baseline_name="bare SQL read of the cells",
            note=f"GET /instructor/gradebook.csv, {len(csv_bytes) / 1e6:.1f} MB",
        ),  # fmt: skip
        Result(
            "6 memory",
            "peak RSS of a gunicorn worker (VmHWM)",
            "MB",
            max(hwm) / 1024 if hwm else float("nan"),
            TARGET_RSS_MB,
            note="after serving the scale test's scoreboard and gradebook pages; workers: "
            + ", ".join(f"{h / 1024:.0f} MB" for h in hwm),
        ),  # fmt: skip
    ]


__all__ = ["run", "generate_class", "prepare_class", "cache_key", "statistics"]
