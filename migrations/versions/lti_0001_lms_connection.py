"""LMS connection (LTI 1.3): keys, registrations, deployments, launch data, users, contexts,
members, links, line items and the grade queue

Revision ID: lti_0001
Revises: 0002_stored_variants
Create Date: 2026-12-01 09:00:00

Models: quizapp/lti/models.py (what each table guarantees is in its docstring).
"""

import sqlalchemy as sa
from alembic import op


# revision identifiers, used by Alembic.
revision = "lti_0001"
down_revision = "0002_stored_variants"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "lti_keys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kid", sa.String(length=64), nullable=False),
        sa.Column("public_jwk", sa.JSON(), nullable=False),
        sa.Column("private_key", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("retired_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_keys")),
        sa.UniqueConstraint("kid", name=op.f("uq_lti_keys_kid")),
    )
    op.create_table(
        "lti_launch_data",
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("value", sa.JSON(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_lti_launch_data")),
    )
    with op.batch_alter_table("lti_launch_data", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_lti_launch_data_expires_at"), ["expires_at"], unique=False
        )

    op.create_table(
        "lti_registrations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("issuer", sa.String(length=255), nullable=False),
        sa.Column("client_id", sa.String(length=255), nullable=False),
        sa.Column("auth_login_url", sa.Text(), nullable=False),
        sa.Column("auth_token_url", sa.Text(), nullable=False),
        sa.Column("key_set_url", sa.Text(), nullable=False),
        sa.Column("auth_audience", sa.Text(), nullable=True),
        sa.Column("platform_jwks", sa.JSON(), nullable=True),
        sa.Column("jwks_fetched_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_registrations")),
        sa.UniqueConstraint(
            "issuer", "client_id", name=op.f("uq_lti_registrations_issuer_client_id")
        ),
    )
    op.create_table(
        "lti_contexts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("registration_id", sa.Integer(), nullable=False),
        sa.Column("context_id", sa.String(length=255), nullable=False),
        sa.Column("deployment_id", sa.String(length=255), nullable=False),
        sa.Column("title", sa.String(length=255), nullable=False),
        sa.Column("label", sa.String(length=255), nullable=False),
        sa.Column("lineitems_url", sa.Text(), nullable=True),
        sa.Column("ags_scopes", sa.JSON(), nullable=False),
        sa.Column("memberships_url", sa.Text(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["registration_id"],
            ["lti_registrations.id"],
            name=op.f("fk_lti_contexts_registration_id_lti_registrations"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_contexts")),
        sa.UniqueConstraint(
            "registration_id", "context_id", name=op.f("uq_lti_contexts_registration_id_context_id")
        ),
    )
    op.create_table(
        "lti_deployments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("registration_id", sa.Integer(), nullable=False),
        sa.Column("deployment_id", sa.String(length=255), nullable=False),
        sa.ForeignKeyConstraint(
            ["registration_id"],
            ["lti_registrations.id"],
            name=op.f("fk_lti_deployments_registration_id_lti_registrations"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_deployments")),
        sa.UniqueConstraint(
            "registration_id",
            "deployment_id",
            name=op.f("uq_lti_deployments_registration_id_deployment_id"),
        ),
    )
    op.create_table(
        "lti_users",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("registration_id", sa.Integer(), nullable=False),
        sa.Column("sub", sa.String(length=255), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_launch_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["registration_id"],
            ["lti_registrations.id"],
            name=op.f("fk_lti_users_registration_id_lti_registrations"),
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_lti_users_user_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_users")),
        sa.UniqueConstraint(
            "registration_id", "sub", name=op.f("uq_lti_users_registration_id_sub")
        ),
    )
    with op.batch_alter_table("lti_users", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_lti_users_user_id"), ["user_id"], unique=False)

    op.create_table(
        "lti_lineitems",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("context_id", sa.Integer(), nullable=False),
        sa.Column("resource_id", sa.String(length=255), nullable=False),
        sa.Column("url", sa.Text(), nullable=True),
        sa.Column("resource_link_id", sa.String(length=255), nullable=True),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["context_id"],
            ["lti_contexts.id"],
            name=op.f("fk_lti_lineitems_context_id_lti_contexts"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_lineitems")),
        sa.UniqueConstraint(
            "context_id", "resource_id", name=op.f("uq_lti_lineitems_context_id_resource_id")
        ),
    )
    op.create_table(
        "lti_links",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("context_id", sa.Integer(), nullable=False),
        sa.Column("resource_link_id", sa.String(length=255), nullable=False),
        sa.Column("quiz_id", sa.String(length=100), nullable=True),
        sa.Column("exercise_id", sa.String(length=200), nullable=True),
        sa.Column("title", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["context_id"], ["lti_contexts.id"], name=op.f("fk_lti_links_context_id_lti_contexts")
        ),
        sa.ForeignKeyConstraint(
            ["exercise_id"], ["exercises.id"], name=op.f("fk_lti_links_exercise_id_exercises")
        ),
        sa.ForeignKeyConstraint(
            ["quiz_id"], ["quizzes.id"], name=op.f("fk_lti_links_quiz_id_quizzes")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_links")),
        sa.UniqueConstraint(
            "context_id", "resource_link_id", name=op.f("uq_lti_links_context_id_resource_link_id")
        ),
    )
    op.create_table(
        "lti_members",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("context_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("roles", sa.JSON(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["context_id"], ["lti_contexts.id"], name=op.f("fk_lti_members_context_id_lti_contexts")
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_lti_members_user_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_members")),
        sa.UniqueConstraint(
            "context_id", "user_id", name=op.f("uq_lti_members_context_id_user_id")
        ),
    )
    with op.batch_alter_table("lti_members", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_lti_members_user_id"), ["user_id"], unique=False)

    op.create_table(
        "lti_grades",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("lineitem_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("pending", sa.Boolean(), nullable=False),
        sa.Column("force", sa.Boolean(), nullable=False),
        sa.Column("queued_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("next_try_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("claimed_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("tries", sa.Integer(), nullable=False),
        sa.Column("sent_given", sa.Float(), nullable=True),
        sa.Column("sent_maximum", sa.Float(), nullable=True),
        sa.Column("sent_progress", sa.String(length=32), nullable=True),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_status", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("last_error_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["lineitem_id"],
            ["lti_lineitems.id"],
            name=op.f("fk_lti_grades_lineitem_id_lti_lineitems"),
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_lti_grades_user_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_grades")),
        sa.UniqueConstraint(
            "lineitem_id", "user_id", name=op.f("uq_lti_grades_lineitem_id_user_id")
        ),
    )
    with op.batch_alter_table("lti_grades", schema=None) as batch_op:
        batch_op.create_index("ix_lti_grades_due", ["pending", "next_try_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_lti_grades_user_id"), ["user_id"], unique=False)


def downgrade():
    with op.batch_alter_table("lti_grades", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_lti_grades_user_id"))
        batch_op.drop_index("ix_lti_grades_due")

    op.drop_table("lti_grades")
    with op.batch_alter_table("lti_members", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_lti_members_user_id"))

    op.drop_table("lti_members")
    op.drop_table("lti_links")
    op.drop_table("lti_lineitems")
    with op.batch_alter_table("lti_users", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_lti_users_user_id"))

    op.drop_table("lti_users")
    op.drop_table("lti_deployments")
    op.drop_table("lti_contexts")
    op.drop_table("lti_registrations")
    with op.batch_alter_table("lti_launch_data", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_lti_launch_data_expires_at"))

    op.drop_table("lti_launch_data")
    op.drop_table("lti_keys")
