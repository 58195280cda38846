"""initial schema: users, tokens, quizzes, exercises, versions, variants, submissions, progress

Revision ID: 0001
Revises:
Create Date: 2026-11-30 02:30:33.262193

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('quizzes',
    sa.Column('id', sa.String(length=100), nullable=False),
    sa.Column('title', sa.String(length=200), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('opens_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('closes_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('content_hash', sa.String(length=64), nullable=False),
    sa.Column('archived', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_quizzes'))
    )
    op.create_table('users',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('username', sa.String(length=64), nullable=False),
    sa.Column('username_key', sa.String(length=256), nullable=False),
    sa.Column('display_name', sa.String(length=120), nullable=False),
    sa.Column('email', sa.String(length=254), nullable=True),
    sa.Column('role', sa.String(length=16), nullable=False),
    sa.Column('password_hash', sa.String(length=255), nullable=False),
    sa.Column('active', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("role IN ('student', 'instructor')", name=op.f('ck_users_role')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_users')),
    sa.UniqueConstraint('username_key', name=op.f('uq_users_username_key'))
    )
    op.create_table('api_tokens',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('name', sa.String(length=120), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('last_used_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_api_tokens_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_api_tokens')),
    sa.UniqueConstraint('token_hash', name=op.f('uq_api_tokens_token_hash'))
    )
    with op.batch_alter_table('api_tokens', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_api_tokens_user_id'), ['user_id'], unique=False)

    op.create_table('exercises',
    sa.Column('id', sa.String(length=200), nullable=False),
    sa.Column('quiz_id', sa.String(length=100), nullable=False),
    sa.Column('title', sa.String(length=200), nullable=False),
    sa.Column('kind', sa.String(length=64), nullable=False),
    sa.Column('points', sa.Float(), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('practice', sa.Boolean(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('concepts', sa.JSON(), nullable=False),
    sa.Column('current_hash', sa.String(length=64), nullable=False),
    sa.Column('archived', sa.Boolean(), nullable=False),
    sa.Column('sync_error', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['quiz_id'], ['quizzes.id'], name=op.f('fk_exercises_quiz_id_quizzes')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_exercises'))
    )
    with op.batch_alter_table('exercises', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_exercises_quiz_id'), ['quiz_id'], unique=False)

    op.create_table('exercise_versions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('exercise_id', sa.String(length=200), nullable=False),
    sa.Column('content_hash', sa.String(length=64), nullable=False),
    sa.Column('source', sa.Text(), nullable=False),
    sa.Column('title', sa.String(length=200), nullable=False),
    sa.Column('points', sa.Float(), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['exercise_id'], ['exercises.id'], name=op.f('fk_exercise_versions_exercise_id_exercises')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_exercise_versions')),
    sa.UniqueConstraint('exercise_id', 'content_hash', name=op.f('uq_exercise_versions_exercise_id_content_hash'))
    )
    with op.batch_alter_table('exercise_versions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_exercise_versions_exercise_id'), ['exercise_id'], unique=False)

    op.create_table('progress',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('exercise_id', sa.String(length=200), nullable=False),
    sa.Column('best_score', sa.Float(), nullable=False),
    sa.Column('best_points', sa.Float(), nullable=False),
    sa.Column('attempts_used', sa.Integer(), nullable=False),
    sa.Column('submissions_count', sa.Integer(), nullable=False),
    sa.Column('solved_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('best_reached_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_activity', sa.DateTime(timezone=True), nullable=True),
    sa.Column('current_variant', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['exercise_id'], ['exercises.id'], name=op.f('fk_progress_exercise_id_exercises')),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_progress_user_id_users')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_progress')),
    sa.UniqueConstraint('user_id', 'exercise_id', name=op.f('uq_progress_user_id_exercise_id'))
    )
    with op.batch_alter_table('progress', schema=None) as batch_op:
        batch_op.create_index('ix_progress_exercise_points', ['exercise_id', 'best_points'], unique=False)
        batch_op.create_index('ix_progress_user', ['user_id'], unique=False)

    op.create_table('variants',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('exercise_id', sa.String(length=200), nullable=False),
    sa.Column('variant_number', sa.Integer(), nullable=False),
    sa.Column('seed', sa.BigInteger(), nullable=False),
    sa.Column('version_id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['exercise_id'], ['exercises.id'], name=op.f('fk_variants_exercise_id_exercises')),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_variants_user_id_users')),
    sa.ForeignKeyConstraint(['version_id'], ['exercise_versions.id'], name=op.f('fk_variants_version_id_exercise_versions')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_variants')),
    sa.UniqueConstraint('user_id', 'exercise_id', 'variant_number', name=op.f('uq_variants_user_id_exercise_id_variant_number'))
    )
    with op.batch_alter_table('variants', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_variants_exercise_id'), ['exercise_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_variants_user_id'), ['user_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_variants_version_id'), ['version_id'], unique=False)

    op.create_table('submissions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('variant_id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('exercise_id', sa.String(length=200), nullable=False),
    sa.Column('version_id', sa.Integer(), nullable=False),
    sa.Column('answer_format', sa.String(length=8), nullable=False),
    sa.Column('raw_answer', sa.Text(), nullable=False),
    sa.Column('answer_hash', sa.String(length=64), nullable=False),
    sa.Column('parsed', sa.JSON(), nullable=True),
    sa.Column('verdict', sa.JSON(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('score', sa.Float(), nullable=False),
    sa.Column('points', sa.Float(), nullable=False),
    sa.Column('mistakes', sa.JSON(), nullable=False),
    sa.Column('used_attempt', sa.Boolean(), nullable=False),
    sa.Column('attempt_number', sa.Integer(), nullable=True),
    sa.Column('duplicate_of_id', sa.Integer(), nullable=True),
    sa.Column('source', sa.String(length=8), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['duplicate_of_id'], ['submissions.id'], name=op.f('fk_submissions_duplicate_of_id_submissions')),
    sa.ForeignKeyConstraint(['exercise_id'], ['exercises.id'], name=op.f('fk_submissions_exercise_id_exercises')),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_submissions_user_id_users')),
    sa.ForeignKeyConstraint(['variant_id'], ['variants.id'], name=op.f('fk_submissions_variant_id_variants')),
    sa.ForeignKeyConstraint(['version_id'], ['exercise_versions.id'], name=op.f('fk_submissions_version_id_exercise_versions')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_submissions'))
    )
    with op.batch_alter_table('submissions', schema=None) as batch_op:
        batch_op.create_index('ix_submissions_exercise_status', ['exercise_id', 'status'], unique=False)
        batch_op.create_index('ix_submissions_user_exercise', ['user_id', 'exercise_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_submissions_variant_id'), ['variant_id'], unique=False)



def downgrade():
    with op.batch_alter_table('submissions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_submissions_variant_id'))
        batch_op.drop_index('ix_submissions_user_exercise')
        batch_op.drop_index('ix_submissions_exercise_status')

    op.drop_table('submissions')
    with op.batch_alter_table('variants', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_variants_version_id'))
        batch_op.drop_index(batch_op.f('ix_variants_user_id'))
        batch_op.drop_index(batch_op.f('ix_variants_exercise_id'))

    op.drop_table('variants')
    with op.batch_alter_table('progress', schema=None) as batch_op:
        batch_op.drop_index('ix_progress_user')
        batch_op.drop_index('ix_progress_exercise_points')

    op.drop_table('progress')
    with op.batch_alter_table('exercise_versions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_exercise_versions_exercise_id'))

    op.drop_table('exercise_versions')
    with op.batch_alter_table('exercises', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_exercises_quiz_id'))

    op.drop_table('exercises')
    with op.batch_alter_table('api_tokens', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_api_tokens_user_id'))

    op.drop_table('api_tokens')
    op.drop_table('users')
    op.drop_table('quizzes')
