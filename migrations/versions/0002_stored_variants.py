"""stored variants: variants.record / page / generator / seed_fallbacks / rekeyed_at, variant_failures

Revision ID: 0002_stored_variants
Revises: instructor_0002
Create Date: 2026-12-01 09:30:00

A variant becomes a stored fact: what was drawn (``record``, ``quizapp.bank.stored.freeze``) and
what the student is shown (``page``, ``quizapp.page.render_page``) are stored with it at creation
and never regenerated.  The upgrade fills them once for every existing variant by generating it
again with the code of this release from its stored YAML version and seed: the same numbers the
student has seen until now (the generators of this release draw what the previous one drew; the
golden-draw tests guard it).  A variant whose seed does not generate (it could only ever show an
error page) and has no submissions gets the first working fallback seed, as new variants do; one
with submissions that no longer generates stops the upgrade with the variant named, rather than
storing numbers its student never saw.
"""

import json

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0002_stored_variants"
down_revision = "instructor_0002"
branch_labels = None
depends_on = None

_BATCH = 500


def upgrade():
    # First, before any change (SQLite's DDL is not transactional here): every variant a student
    # answered must still generate from its seed, or the upgrade stops with it named.
    _check_answered(op.get_bind())
    with op.batch_alter_table("variants", schema=None) as batch_op:
        batch_op.add_column(sa.Column("record", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("page", sa.JSON(), nullable=True))
        batch_op.add_column(
            sa.Column("generator", sa.String(length=120), nullable=False, server_default="")
        )
        batch_op.add_column(
            sa.Column("seed_fallbacks", sa.Integer(), nullable=False, server_default="0")
        )
        batch_op.add_column(sa.Column("rekeyed_at", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "variant_failures",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("exercise_id", sa.String(length=200), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("variant_number", sa.Integer(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("error", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["exercise_id"], ["exercises.id"], name=op.f("fk_variant_failures_exercise_id_exercises")
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_variant_failures_user_id_users")
        ),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["exercise_versions.id"],
            name=op.f("fk_variant_failures_version_id_exercise_versions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_variant_failures")),
    )
    with op.batch_alter_table("variant_failures", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_variant_failures_exercise_id"), ["exercise_id"], unique=False
        )

    _backfill(op.get_bind())

    with op.batch_alter_table("variants", schema=None) as batch_op:
        batch_op.alter_column("record", existing_type=sa.JSON(), nullable=False)
        batch_op.alter_column("page", existing_type=sa.JSON(), nullable=False)
        batch_op.alter_column("generator", server_default=None)
        batch_op.alter_column("seed_fallbacks", server_default=None)


def _check_answered(bind):
    """Raise ``RuntimeError`` naming the first answered variant that no longer generates."""
    from quizapp.bank import load_exercise_source

    rows = bind.execute(
        sa.text(
            "SELECT v.id, v.exercise_id, v.seed, ev.id, ev.source FROM variants v "
            "JOIN exercise_versions ev ON ev.id = v.version_id "
            "WHERE v.id IN (SELECT variant_id FROM submissions) ORDER BY ev.id, v.id"
        )
    ).all()
    loaded = {}
    for variant_id, exercise_id, seed, version_id, source in rows:
        try:
            if version_id not in loaded:
                loaded[version_id] = load_exercise_source(exercise_id, source)
            loaded[version_id].generate(int(seed))
        except Exception as exc:
            raise RuntimeError(
                f"stored variants: variant {variant_id} of {exercise_id} (seed {seed}) has "
                f"submissions but no longer generates with this release's code: {exc}. Nothing "
                "was changed; restore the kind it uses, or upgrade from the release that "
                "created it."
            ) from exc


def _backfill(bind):
    """Fill ``record`` and ``page`` of every variant, one exercise version at a time."""
    from datetime import UTC, datetime

    from quizapp.bank import load_exercise_source
    from quizapp.services.variants import draw_variant

    variants = sa.table(
        "variants",
        sa.column("id", sa.Integer),
        sa.column("seed", sa.BigInteger),
        sa.column("record", sa.JSON),
        sa.column("page", sa.JSON),
        sa.column("generator", sa.String),
        sa.column("seed_fallbacks", sa.Integer),
    )
    failures = sa.table(
        "variant_failures",
        sa.column("exercise_id", sa.String),
        sa.column("version_id", sa.Integer),
        sa.column("user_id", sa.Integer),
        sa.column("variant_number", sa.Integer),
        sa.column("seed", sa.BigInteger),
        sa.column("error", sa.Text),
        sa.column("created_at", sa.DateTime(timezone=True)),
    )
    answered = {
        row[0] for row in bind.execute(sa.text("SELECT DISTINCT variant_id FROM submissions"))
    }
    versions = bind.execute(
        sa.text(
            "SELECT DISTINCT ev.id, ev.exercise_id, ev.source FROM exercise_versions ev "
            "JOIN variants v ON v.version_id = ev.id ORDER BY ev.id"
        )
    ).all()
    now = datetime.now(UTC)
    update = (
        sa.update(variants)
        .where(variants.c.id == sa.bindparam("vid"))
        .values(
            seed=sa.bindparam("new_seed"),
            record=sa.bindparam("new_record", type_=sa.JSON),
            page=sa.bindparam("new_page", type_=sa.JSON),
            generator=sa.bindparam("new_generator"),
            seed_fallbacks=sa.bindparam("new_fallbacks"),
        )
    )
    for version_id, exercise_id, source in versions:
        try:
            exercise = load_exercise_source(exercise_id, source)
        except Exception as exc:
            raise RuntimeError(
                f"stored variants: version {version_id} of {exercise_id} does not load with this "
                f"release's code ({exc}); its variants cannot be stored unchanged. Restore the "
                "kind it uses, or upgrade from the release that created them."
            ) from exc
        rows = bind.execute(
            sa.text(
                "SELECT id, user_id, variant_number, seed FROM variants "
                "WHERE version_id = :v ORDER BY id"
            ),
            {"v": version_id},
        ).all()
        batch, lost = [], []
        for variant_id, user_id, number, seed in rows:
            try:
                drawn = draw_variant(exercise, int(seed))
            except Exception as exc:
                raise RuntimeError(
                    f"stored variants: variant {variant_id} of {exercise_id} (seed {seed}) and "
                    f"every fallback seed fail to generate: {exc}"
                ) from exc
            if drawn.seed != int(seed):
                assert variant_id not in answered  # checked by _check_answered
                lost.extend(
                    {
                        "exercise_id": exercise_id,
                        "version_id": version_id,
                        "user_id": user_id,
                        "variant_number": number,
                        "seed": failed_seed,
                        "error": message[:2000],
                        "created_at": now,
                    }
                    for failed_seed, message in drawn.failures
                )
            batch.append(
                {
                    "vid": variant_id,
                    "new_seed": int(drawn.seed),
                    # Through JSON once: the values the application will read back.
                    "new_record": json.loads(json.dumps(drawn.record, allow_nan=False)),
                    "new_page": drawn.page,
                    "new_generator": drawn.generator,
                    "new_fallbacks": len(drawn.failures),
                }
            )
            if len(batch) >= _BATCH:
                bind.execute(update, batch)
                batch = []
        if batch:
            bind.execute(update, batch)
        if lost:
            bind.execute(sa.insert(failures), lost)


def downgrade():
    with op.batch_alter_table("variant_failures", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_variant_failures_exercise_id"))
    op.drop_table("variant_failures")
    with op.batch_alter_table("variants", schema=None) as batch_op:
        batch_op.drop_column("rekeyed_at")
        batch_op.drop_column("seed_fallbacks")
        batch_op.drop_column("generator")
        batch_op.drop_column("page")
        batch_op.drop_column("record")
