"""multi-part exercises: progress.best_parts

Revision ID: 0003_progress_best_parts
Revises: hardening_0001
Create Date: 2026-12-03 10:00:00

A multi-part exercise's progress row keeps the parts of the submission that reached its best
score (part name -> score, share of the exercise's points, follow-through), so the gradebook
shows per-part scores from progress rows without scanning submissions.  Existing rows are of
single-answer exercises (multi-part exercises are new with this revision): the column is NULL.
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0003_progress_best_parts"
down_revision = "hardening_0001"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("progress", schema=None) as batch_op:
        batch_op.add_column(sa.Column("best_parts", sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table("progress", schema=None) as batch_op:
        batch_op.drop_column("best_parts")
