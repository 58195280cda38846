"""scoreboard totals: score_totals (per student, per quiz and course) and score_totals_state

Revision ID: instructor_0002
Revises: instructor_0001
Create Date: 2026-11-30 05:30:00

Models: quizapp.models.ScoreTotal / ScoreTotalsState; maintained by quizapp/instructor/totals.py.
The upgrade back-fills the totals from the progress rows (the same aggregate the scoreboard
computed on every view) and stores the fingerprint of the live exercises they were computed for
(the algorithm of ``quizapp.instructor.totals.scope_fingerprint``, copied here so that this
revision does not change if the application's code does; tests/test_instructor_totals.py checks they
agree).
"""

import hashlib
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "instructor_0002"
down_revision = "instructor_0001"
branch_labels = None
depends_on = None

_AGGREGATE = """
INSERT INTO score_totals (user_id, scope, points, solved, attempts, reached_at)
SELECT p.user_id, {scope}, sum(p.best_points), count(p.solved_at), sum(p.attempts_used),
       max(CASE WHEN p.best_points > 0 THEN p.best_reached_at END)
FROM progress p
JOIN exercises e ON e.id = p.exercise_id
JOIN quizzes q ON q.id = e.quiz_id
LEFT OUTER JOIN excusals x ON x.user_id = p.user_id AND x.exercise_id = p.exercise_id
WHERE e.archived = :no AND q.archived = :no AND x.id IS NULL
GROUP BY p.user_id{group}
"""


def _fingerprint(rows):
    h = hashlib.sha256()
    for ex_id, quiz_id, points in sorted((str(e), str(q), float(p)) for e, q, p in rows):
        h.update(f"{ex_id}\0{quiz_id}\0{points!r}\n".encode())
    return h.hexdigest()


def upgrade():
    op.create_table(
        "score_totals",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("scope", sa.String(length=100), nullable=False),
        sa.Column("points", sa.Float(), nullable=False),
        sa.Column("solved", sa.Integer(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("reached_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_score_totals_user_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_score_totals")),
        sa.UniqueConstraint("scope", "user_id", name=op.f("uq_score_totals_scope_user_id")),
    )
    with op.batch_alter_table("score_totals", schema=None) as batch_op:
        batch_op.create_index("ix_score_totals_user", ["user_id"], unique=False)
    op.create_table(
        "score_totals_state",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("rebuilt_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_score_totals_state")),
    )

    # Back-fill from the progress rows.  A database without any (a new installation) stays
    # empty: no state row means the first scoreboard view builds the totals (at once, there being
    # nothing to sum), and a freshly migrated schema has no rows at all.
    bind = op.get_bind()
    if not bind.execute(sa.text("SELECT count(*) FROM progress")).scalar():
        return
    no = sa.bindparam("no", False, type_=sa.Boolean())
    for scope, group in (("''", ""), ("e.quiz_id", ", e.quiz_id")):
        bind.execute(sa.text(_AGGREGATE.format(scope=scope, group=group)).bindparams(no))
    live = bind.execute(
        sa.text(
            "SELECT e.id, e.quiz_id, e.points FROM exercises e JOIN quizzes q ON q.id = e.quiz_id"
            " WHERE e.archived = :no AND q.archived = :no"
        ).bindparams(no)
    ).all()
    state = sa.table(
        "score_totals_state",
        sa.column("id", sa.Integer()),
        sa.column("fingerprint", sa.String()),
        sa.column("rebuilt_at", sa.DateTime(timezone=True)),
    )
    op.bulk_insert(
        state, [{"id": 1, "fingerprint": _fingerprint(live), "rebuilt_at": datetime.now(UTC)}]
    )


def downgrade():
    op.drop_table("score_totals_state")
    with op.batch_alter_table("score_totals", schema=None) as batch_op:
        batch_op.drop_index("ix_score_totals_user")
    op.drop_table("score_totals")
