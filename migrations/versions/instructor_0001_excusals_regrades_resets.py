"""instructor side: excusals, regrade runs, verdict history, password-reset links

Revision ID: instructor_0001
Revises: 0001
Create Date: 2026-11-30 02:50:00

Models: quizapp/models_instructor.py.
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "instructor_0001"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "excusals",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("exercise_id", sa.String(length=200), nullable=False),
        sa.Column("reason", sa.String(length=500), nullable=False),
        sa.Column("created_by_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["created_by_id"], ["users.id"], name=op.f("fk_excusals_created_by_id_users")
        ),
        sa.ForeignKeyConstraint(
            ["exercise_id"], ["exercises.id"], name=op.f("fk_excusals_exercise_id_exercises")
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_excusals_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_excusals")),
        sa.UniqueConstraint(
            "user_id", "exercise_id", name=op.f("uq_excusals_user_id_exercise_id")
        ),
    )
    with op.batch_alter_table("excusals", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_excusals_exercise_id"), ["exercise_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_excusals_user_id"), ["user_id"], unique=False)

    op.create_table(
        "regrades",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("exercise_id", sa.String(length=200), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("started_by_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("submissions_regraded", sa.Integer(), nullable=False),
        sa.Column("submissions_changed", sa.Integer(), nullable=False),
        sa.Column("summary", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["exercise_id"], ["exercises.id"], name=op.f("fk_regrades_exercise_id_exercises")
        ),
        sa.ForeignKeyConstraint(
            ["started_by_id"], ["users.id"], name=op.f("fk_regrades_started_by_id_users")
        ),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["exercise_versions.id"],
            name=op.f("fk_regrades_version_id_exercise_versions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_regrades")),
    )
    with op.batch_alter_table("regrades", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_regrades_exercise_id"), ["exercise_id"], unique=False)

    op.create_table(
        "verdict_history",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("regrade_id", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("points", sa.Float(), nullable=False),
        sa.Column("mistakes", sa.JSON(), nullable=False),
        sa.Column("verdict", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["regrade_id"], ["regrades.id"], name=op.f("fk_verdict_history_regrade_id_regrades")
        ),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submissions.id"],
            name=op.f("fk_verdict_history_submission_id_submissions"),
        ),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["exercise_versions.id"],
            name=op.f("fk_verdict_history_version_id_exercise_versions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_verdict_history")),
    )
    with op.batch_alter_table("verdict_history", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_verdict_history_regrade_id"), ["regrade_id"], unique=False
        )
        batch_op.create_index("ix_verdict_history_submission", ["submission_id"], unique=False)

    op.create_table(
        "password_resets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("note", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_password_resets_user_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_password_resets")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_password_resets_token_hash")),
    )
    with op.batch_alter_table("password_resets", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_password_resets_user_id"), ["user_id"], unique=False)


def downgrade():
    with op.batch_alter_table("password_resets", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_password_resets_user_id"))
    op.drop_table("password_resets")
    with op.batch_alter_table("verdict_history", schema=None) as batch_op:
        batch_op.drop_index("ix_verdict_history_submission")
        batch_op.drop_index(batch_op.f("ix_verdict_history_regrade_id"))
    op.drop_table("verdict_history")
    with op.batch_alter_table("regrades", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_regrades_exercise_id"))
    op.drop_table("regrades")
    with op.batch_alter_table("excusals", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_excusals_user_id"))
        batch_op.drop_index(batch_op.f("ix_excusals_exercise_id"))
    op.drop_table("excusals")
