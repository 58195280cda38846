"""Database plumbing: SQLite pragmas and ``BEGIN IMMEDIATE``, Alembic upgrades.

SQLite (the embedded default) gets, on every new connection: WAL journal (readers never block the
writer), ``busy_timeout`` (a writer waits for the lock instead of failing with "database is
locked"), ``foreign_keys=ON``, and ``synchronous`` from the app's ``QUIZAPP_SQLITE_SYNCHRONOUS``
setting (NORMAL by default: no fsync per commit; see ``quizapp.config`` for the durability
trade-off; registered per engine by :func:`init_app`).  The Python driver's own transaction handling is switched off
and SQLAlchemy's ``begin`` event emits ``BEGIN`` itself: ``BEGIN IMMEDIATE`` when the connection
carries the ``quizapp_write`` execution option (``quizapp.services.begin_write``), so write
transactions take the lock up front and cannot deadlock by upgrading a read lock.  This is the
recipe from SQLAlchemy's pysqlite documentation ("Serializable isolation / Savepoints /
Transactional DDL").
"""

from __future__ import annotations

import sqlite3
from functools import partial
from typing import Any

from flask import Flask
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

from quizapp.config import SQLITE_BUSY_TIMEOUT_MS, SQLITE_SYNCHRONOUS_VALUES
from quizapp.resources import migrations_dir
from quizapp.services import WRITE_OPTION

#: The Alembic history (Flask-Migrate layout): ``migrations/`` of the checkout, or the copy the
#: wheel ships inside the package (see :mod:`quizapp.resources`).
MIGRATIONS_DIR = migrations_dir()


@event.listens_for(Engine, "connect")
def _sqlite_on_connect(dbapi_connection: Any, connection_record: Any) -> None:
    if not isinstance(dbapi_connection, sqlite3.Connection):
        return
    dbapi_connection.isolation_level = None  # we emit BEGIN ourselves (see _sqlite_on_begin)
    cur = dbapi_connection.cursor()
    try:
        cur.execute(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT_MS)}")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA foreign_keys = ON")
    finally:
        cur.close()


def _sqlite_set_synchronous(level: str, dbapi_connection: Any, connection_record: Any) -> None:
    if not isinstance(dbapi_connection, sqlite3.Connection):
        return
    assert level in SQLITE_SYNCHRONOUS_VALUES  # checked by quizapp.config; never interpolate more
    cur = dbapi_connection.cursor()
    try:
        cur.execute(f"PRAGMA synchronous = {level}")
    finally:
        cur.close()


def init_app(app: Flask) -> None:
    """Apply ``app.config["QUIZAPP_SQLITE_SYNCHRONOUS"]`` to every new connection of the app's
    SQLite engines (``db.init_app`` must have run; Flask-SQLAlchemy creates the engines there,
    before any connection is opened).  Other dialects are left alone."""
    from quizapp.models import db

    level = app.config["QUIZAPP_SQLITE_SYNCHRONOUS"]
    with app.app_context():
        engines = list(db.engines.values())
    for engine in engines:
        if engine.dialect.name == "sqlite":
            event.listen(engine, "connect", partial(_sqlite_set_synchronous, level))


@event.listens_for(Engine, "begin")
def _sqlite_on_begin(conn: Connection) -> None:
    if conn.dialect.name != "sqlite":
        return
    if conn.get_execution_options().get(WRITE_OPTION):
        conn.exec_driver_sql("BEGIN IMMEDIATE")
    else:
        conn.exec_driver_sql("BEGIN")


def upgrade_database(app: Flask, revision: str = "head") -> None:
    """Run the Alembic migrations up to ``revision`` on ``app``'s database (Flask-Migrate)."""
    from flask_migrate import upgrade

    with app.app_context():
        upgrade(directory=str(MIGRATIONS_DIR), revision=revision)
