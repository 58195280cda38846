"""``services.user_for_token`` records a token's use without upgrading the caller's read
transaction to a write (which SQLite refuses at once, "database is locked", when another
connection wrote since the read began; the busy timeout does not help)."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

from test_web_support import make_app

from quizapp import services
from quizapp.models import ApiToken, db


def test_token_use_is_recorded_even_when_another_writer_went_first(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    with app.app_context():
        user = services.create_user(db.session, "ana", "correct horse")
        token = services.create_api_token(db.session, user)
        old = services.utcnow() - timedelta(hours=1)
        db.session.execute(db.update(ApiToken).values(last_used_at=old))
        db.session.commit()

        # The request's session has read something: its SQLite read transaction (snapshot) is open.
        assert db.session.scalar(db.select(ApiToken.id)) is not None
        # Another worker writes and commits meanwhile.
        other = sqlite3.connect(tmp_path / "quizapp.sqlite", timeout=5)
        other.execute("UPDATE users SET display_name = 'Ana' WHERE username = 'ana'")
        other.commit()
        other.close()

        found = services.user_for_token(db.session, token)  # used to raise "database is locked"
        assert found is not None and found.username == "ana"
        db.session.commit()
        used = db.session.scalar(db.select(ApiToken.last_used_at))
        assert used is not None and used > old
        # Within the throttle window nothing is written again.
        assert services.user_for_token(db.session, token) is not None
        assert db.session.scalar(db.select(ApiToken.last_used_at)) == used
