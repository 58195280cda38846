"""hardening: users.session_version (sign out everywhere), incidents (503s kept for instructors)

Revision ID: hardening_0001
Revises: deadlines_0001
Create Date: 2026-12-01 10:00:00

Models: quizapp.models.User.session_version, quizapp.models_instructor.Incident.
Existing users get session_version 0, which their current sessions (cookies holding the plain
user id) match, so nobody is signed out by the upgrade.
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "hardening_0001"
down_revision = "deadlines_0001"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("session_version", sa.Integer(), server_default="0", nullable=False)
        )
    op.create_table(
        "incidents",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("exercise_id", sa.String(length=200), nullable=True),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("path", sa.String(length=500), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["exercise_id"], ["exercises.id"], name=op.f("fk_incidents_exercise_id_exercises")
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_incidents_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_incidents")),
    )
    with op.batch_alter_table("incidents", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_incidents_exercise_id"), ["exercise_id"], unique=False)


def downgrade():
    with op.batch_alter_table("incidents", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_incidents_exercise_id"))
    op.drop_table("incidents")
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("session_version")
