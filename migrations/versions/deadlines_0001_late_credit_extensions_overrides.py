"""deadlines: course time zone and late periods of quizzes, late credit of submissions,
score overrides on progress rows, per-student extensions, the audit history

Revision ID: deadlines_0001
Revises: lti_0001
Create Date: 2026-12-01 09:00:00

Models: quizapp.models (Quiz.late / timezone, position nullable; Submission.late / credit;
Progress.best_credit / best_late / override_*), quizapp.models_instructor (Extension,
AuditEntry); the rules are in quizapp/services/deadlines.py.  Existing rows get what they meant
before: no late periods, zone UTC, every submission on time at full credit, no override.  A quiz
whose position was 0 keeps 0 until the next sync writes its ``order:`` (or NULL without one).
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "deadlines_0001"
down_revision = "lti_0001"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("quizzes") as batch:
        batch.alter_column("position", existing_type=sa.Integer(), nullable=True)
        batch.add_column(sa.Column("late", sa.JSON(), nullable=False, server_default="[]"))
        batch.add_column(
            sa.Column("timezone", sa.String(length=64), nullable=False, server_default="UTC")
        )
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(
            sa.Column("late", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("credit", sa.Float(), nullable=False, server_default="1"))
    with op.batch_alter_table("progress") as batch:
        batch.add_column(sa.Column("best_credit", sa.Float(), nullable=False, server_default="1"))
        batch.add_column(
            sa.Column("best_late", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("override_points", sa.Float(), nullable=True))
        batch.add_column(sa.Column("override_reason", sa.Text(), nullable=True))
        batch.add_column(sa.Column("override_by_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("override_at", sa.DateTime(timezone=True), nullable=True))
        batch.create_foreign_key(
            op.f("fk_progress_override_by_id_users"), "users", ["override_by_id"], ["id"]
        )
    op.create_table(
        "extensions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("quiz_id", sa.String(length=100), nullable=False),
        sa.Column("until", sa.DateTime(timezone=True), nullable=False),
        sa.Column("credit", sa.Float(), nullable=False),
        sa.Column("reason", sa.String(length=500), nullable=False),
        sa.Column("created_by_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["created_by_id"], ["users.id"], name=op.f("fk_extensions_created_by_id_users")
        ),
        sa.ForeignKeyConstraint(
            ["quiz_id"], ["quizzes.id"], name=op.f("fk_extensions_quiz_id_quizzes")
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_extensions_user_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_extensions")),
        sa.UniqueConstraint("user_id", "quiz_id", name=op.f("uq_extensions_user_id_quiz_id")),
    )
    op.create_index(op.f("ix_extensions_user_id"), "extensions", ["user_id"], unique=False)
    op.create_index(op.f("ix_extensions_quiz_id"), "extensions", ["quiz_id"], unique=False)
    op.create_table(
        "grade_audit",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor_id", sa.Integer(), nullable=True),
        sa.Column("actor", sa.String(length=200), nullable=False),
        sa.Column("action", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("quiz_id", sa.String(length=100), nullable=True),
        sa.Column("exercise_id", sa.String(length=200), nullable=True),
        sa.Column("before", sa.JSON(), nullable=True),
        sa.Column("after", sa.JSON(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["actor_id"], ["users.id"], name=op.f("fk_grade_audit_actor_id_users")
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_grade_audit_user_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_grade_audit")),
    )
    op.create_index("ix_grade_audit_user", "grade_audit", ["user_id", "id"], unique=False)


def downgrade():
    op.drop_index("ix_grade_audit_user", table_name="grade_audit")
    op.drop_table("grade_audit")
    op.drop_index(op.f("ix_extensions_quiz_id"), table_name="extensions")
    op.drop_index(op.f("ix_extensions_user_id"), table_name="extensions")
    op.drop_table("extensions")
    with op.batch_alter_table("progress") as batch:
        batch.drop_constraint(op.f("fk_progress_override_by_id_users"), type_="foreignkey")
        batch.drop_column("override_at")
        batch.drop_column("override_by_id")
        batch.drop_column("override_reason")
        batch.drop_column("override_points")
        batch.drop_column("best_late")
        batch.drop_column("best_credit")
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("credit")
        batch.drop_column("late")
    op.execute("UPDATE quizzes SET position = 0 WHERE position IS NULL")
    with op.batch_alter_table("quizzes") as batch:
        batch.drop_column("timezone")
        batch.drop_column("late")
        batch.alter_column("position", existing_type=sa.Integer(), nullable=False)
