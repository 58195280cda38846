"""The Alembic history matches the models: ``upgrade`` on an empty database creates exactly the
schema ``quizapp.models`` declares.  Fails when a model changes without a migration."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from test_web_support import make_app

from quizapp.models import db
from quizapp.web.database import upgrade_database


def _diff(app, metadata: sa.MetaData) -> list:
    with app.app_context(), db.engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": True})
        return compare_metadata(ctx, metadata)


def test_upgrade_on_empty_database_equals_models(tmp_path: Path) -> None:
    """On SQLite and on PostgreSQL (tests/conftest.py runs it on both): the migrated schema is
    exactly the models' one, with each backend's connection settings in force."""
    app = make_app(tmp_path)
    assert _diff(app, db.metadata) == []
    with app.app_context(), db.engine.connect() as conn:
        tables = set(sa.inspect(conn).get_table_names())
        if conn.dialect.name == "sqlite":
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        else:
            assert conn.dialect.name == "postgresql"
            assert conn.dialect.driver == "psycopg"
            assert int(conn.exec_driver_sql("SHOW server_version_num").scalar()) >= 150000
    assert {
        "users",
        "api_tokens",
        "quizzes",
        "exercises",
        "exercise_versions",
        "variants",
        "submissions",
        "progress",
        "alembic_version",
    } <= tables
    assert tables == set(db.metadata.tables) | {"alembic_version"}


def test_comparison_detects_a_model_change_without_migration(tmp_path: Path) -> None:
    """The check above can fail: a column added to (a copy of) the models shows up as a diff."""
    app = make_app(tmp_path)
    changed = sa.MetaData(naming_convention=db.metadata.naming_convention)
    for table in db.metadata.tables.values():
        table.to_metadata(changed)
    changed.tables["users"].append_column(sa.Column("nickname", sa.String(40)))
    diff = _diff(app, changed)
    assert [d[0] for d in diff] == ["add_column"]
    assert diff[0][3].name == "nickname"


def test_downgrade_to_base_and_upgrade_again(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    upgrade_database(app, "head")  # idempotent
    from flask_migrate import downgrade

    from quizapp.web.database import MIGRATIONS_DIR

    with app.app_context():
        downgrade(directory=str(MIGRATIONS_DIR), revision="base")
        with db.engine.connect() as conn:
            assert set(sa.inspect(conn).get_table_names()) <= {"alembic_version"}
    upgrade_database(app)
    assert _diff(app, db.metadata) == []
