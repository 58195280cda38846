"""The issue 14 benchmark scripts run and count correctly (timings are never asserted: the
machine is shared): the submit profile's layer attribution and request counts, the classroom
simulation's requests and stored submissions, the PostgreSQL bench's own schema."""

from __future__ import annotations

import os
import shutil

import pytest

from benchmarks import bench_classroom, profile_submit
from benchmarks.profile_submit import LAYER_NAMES, OTHER, WAITING, breakdown, layer_of

SITE = "/usr/lib/python3/site-packages"


def _frame(function: str, path: str, line: int = 1) -> str:
    return f"{function}\x00{path}\x00{line}"


def test_layer_of_each_kind_of_frame() -> None:
    assert layer_of(f"{SITE}/gunicorn/workers/gthread.py") == "WSGI server (gunicorn)"
    assert layer_of(f"{SITE}/flask/sessions.py") == "session / CSRF / login"
    assert layer_of(f"{SITE}/flask/app.py").startswith("Flask")
    assert layer_of(f"{SITE}/sqlalchemy/orm/session.py").startswith("SQL")
    assert layer_of("/src/quizapp/web/database.py").startswith("SQL")
    assert layer_of("/src/quizapp/web/templates/base.html").startswith("template")
    assert layer_of("/src/quizapp/grading/engine.py") == "grading"
    assert layer_of("/src/quizapp/services/submissions.py").startswith("app")
    assert layer_of("/usr/lib/python3.11/json/decoder.py") is None


def test_breakdown_gives_each_sample_to_the_innermost_layer() -> None:
    """A standard-library leaf counts for its caller's layer; a blocking built-in is waiting;
    the phases are inclusive."""
    worker = _frame("handle", f"{SITE}/gunicorn/workers/gthread.py")
    route = _frame("exercise", "/src/quizapp/web/student.py")
    submit = _frame("submit", "/src/quizapp/services/submissions.py")
    execute = _frame("execute", f"{SITE}/sqlalchemy/engine/base.py")
    loads = _frame("loads", "/usr/lib/python3.11/json/__init__.py")
    send = _frame("socket.sendall", "<built-in>", 0)
    records = [
        ([worker, route, submit, execute, loads], 0.004),  # json under SQLAlchemy: SQL
        ([worker, route, submit], 0.002),  # the service's own code
        ([worker], 0.001),
        ([worker, send], 0.010),  # waiting, not work
        ([_frame("_bootstrap", "/usr/lib/python3.11/threading.py")], 0.0005),
    ]
    out = breakdown(records)
    assert out.total == pytest.approx(0.0075)
    assert out.layers["SQL (SQLAlchemy, driver, write lock)"] == pytest.approx(0.004)
    assert out.layers["app: routes and services"] == pytest.approx(0.002)
    assert out.layers["WSGI server (gunicorn)"] == pytest.approx(0.001)
    assert out.layers[OTHER] == pytest.approx(0.0005)
    assert out.layers[WAITING] == pytest.approx(0.010)
    assert out.phases["route: exercise()"] == pytest.approx(0.006)
    assert out.phases["  submit()"] == pytest.approx(0.006)
    assert sum(v for k, v in out.layers.items() if k != WAITING) == pytest.approx(out.total)


@pytest.mark.skipif(shutil.which("wrk") is None, reason="benchmarks need their tools")
def test_profile_counts_every_request_it_sends() -> None:
    """The profile of quizapp serve's workers saw exactly the submits and bare GETs sent, and
    attributes the submit's CPU over the layers (SQL, template and grading are all there)."""
    profiles = profile_submit.profile(8)
    submit, bare = profiles["submit"], profiles["bare"]
    assert submit.requests == bare.requests == 8
    assert submit.cpu > 0 and bare.cpu > 0 and submit.sample.total > 0
    layers = submit.sample.layers
    for name in ("SQL (SQLAlchemy, driver, write lock)", "template (Jinja, page helpers)"):
        assert layers.get(name, 0) > 0, layers
    shares = sum(submit.ms(layers.get(name, 0.0)) for name in LAYER_NAMES)
    assert shares == pytest.approx(submit.cpu_ms)
    assert "| SQL (SQLAlchemy, driver, write lock) |" in profile_submit.report(profiles)


def test_small_class_every_acknowledged_submission_is_stored() -> None:
    """4 students, 20 answers each compressed into a few seconds: 4 home pages, 16 first views,
    80 verdict pages, all stored, no error."""
    result = bench_classroom.simulate(4, duration=4.0)
    assert result.tally.errors == []
    counts = {kind: len(v) for kind, v in result.tally.latency.items()}
    assert counts == {"home": 4, "exercise page (first view)": 16, "submit": 80}
    assert result.acknowledged == result.stored == 80
    assert result.mismatched == []
    assert 0 < result.scale < 1


@pytest.mark.skipif(
    not os.environ.get("QUIZAPP_TEST_POSTGRES_URL"), reason="QUIZAPP_TEST_POSTGRES_URL is not set"
)
def test_postgres_bench_uses_and_drops_its_own_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlalchemy as sa

    from benchmarks import bench_http_pg

    monkeypatch.setenv(bench_http_pg.POSTGRES_ENV, os.environ["QUIZAPP_TEST_POSTGRES_URL"])
    base = bench_http_pg.base_url()
    schema = bench_http_pg.Schema(base)
    schema.create()
    try:
        engine = sa.create_engine(schema.url, poolclass=sa.pool.NullPool)
        with engine.connect() as conn:
            assert conn.exec_driver_sql("SHOW search_path").scalar_one() == schema.name
    finally:
        schema.drop()
    engine = sa.create_engine(base, poolclass=sa.pool.NullPool)
    with engine.connect() as conn:
        left = conn.execute(
            sa.text("SELECT count(*) FROM pg_namespace WHERE nspname = :n"), {"n": schema.name}
        ).scalar_one()
    assert left == 0


def test_unreachable_postgres_is_a_missing_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    from benchmarks import bench_http_pg
    from benchmarks.common import MissingTool

    monkeypatch.setenv(
        bench_http_pg.POSTGRES_ENV, "postgresql+psycopg://nobody:secret@127.0.0.1:1/none"
    )
    with pytest.raises(MissingTool, match="not reachable") as info:
        bench_http_pg.base_url()
    assert "secret" not in str(info.value)
