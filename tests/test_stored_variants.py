"""A variant, once shown to a student, never changes: its numbers, expected answer and page are
stored when it is created and read back by every view, submit and regrade, whatever happens to
the exercise's YAML or to the generators' code (issue: stored variants).

Expected values are computed here (NumPy from the stored numbers, the bank's own generator run
before the change) and compared with what the app shows after the change.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa
from test_instructor_support import (
    SEED_SECRET,
    TWO,
    add_user,
    bank_app,
    instructor,
    signed_in,
    solution_of,
    stored_submissions,
    submit,
    sync,
    text_of,
    variant_values,
)
from test_web_support import EXERCISES, csrf_from

from quizapp import services
from quizapp.bank import BankError, derive_seed, expected_answer_text, load_bank
from quizapp.bank.loader import Exercise as BankExercise
from quizapp.bank.parts import expected_part_answers
from quizapp.bank.seeds import fallback_seed
from quizapp.bank.stored import freeze
from quizapp.bank.types import FIRST_REVISION
from quizapp.models import Exercise, Submission, User, Variant, VariantFailure, db
from quizapp.page import render_page

MAPS_BACK = "02-matrices-and-maps/10-transpose-maps-back"  # expression: transpose(A) @ y


@pytest.fixture()
def app(tmp_path: Path):
    return bank_app(tmp_path)


def _url(exercise_id: str) -> str:
    return f"/exercises/{exercise_id}"


def _page(client, exercise_id: str) -> str:
    response = client.get(_url(exercise_id))
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    # The CSRF token is signed with the time: everything else must be identical.
    return re.sub(r'name="csrf_token" value="[^"]+"', "", response.get_data(as_text=True))


def _edit(app, exercise_id: str, old: str, new: str) -> None:
    path = Path(app.config["QUIZAPP_EXERCISES"]) / f"{exercise_id}.yaml"
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def _forbid_generation(monkeypatch) -> None:
    """From now on any drawing or page rendering of a variant fails the test."""

    def no(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("a stored variant was generated or rendered again")

    monkeypatch.setattr(BankExercise, "generate", no)
    monkeypatch.setattr("quizapp.page.render_page", no)
    monkeypatch.setattr("quizapp.services.variants.draw_variant", no)
    services.variants._generate.cache_clear()


def test_existing_variants_show_the_same_page_and_grade_the_same_after_yaml_and_code_change(
    app, monkeypatch
) -> None:
    """Every bundled exercise: the student's page before, then the YAML of one exercise changed
    (variables, require, prompt) and synced, and every generator replaced by one that fails: the
    same page, byte for byte, and the answer that was right is still graded correct."""
    add_user(app, "ana")
    client = signed_in(app, "ana")
    with app.app_context():
        ids = [e.id for e in db.session.scalars(sa.select(Exercise).order_by(Exercise.id))]
    assert len(ids) >= 50
    before = {eid: _page(client, eid) for eid in ids}
    with app.app_context():
        ana = services.find_user(db.session, "ana")
        right = {}
        for eid in ids:
            exercise = db.session.get(Exercise, eid)
            variant = services.get_or_create_variant(db.session, ana, exercise, SEED_SECRET)
            shown = services.stored_variant(variant)
            # a multi-part exercise is answered part by part
            right[eid] = (
                expected_part_answers(shown) if shown.parts else expected_answer_text(shown)
            )

    _edit(app, MAPS_BACK, "integers: [-3, 3]", "integers: [-9, 9]")
    _edit(app, MAPS_BACK, "rank(A) == 2", "rank(A) >= 1")
    _edit(app, MAPS_BACK, "compute $A^T", "Now compute $A^T")
    report = sync(app)
    assert report.updated == [MAPS_BACK]
    _forbid_generation(monkeypatch)

    after = {eid: _page(client, eid) for eid in ids}
    changed = [eid for eid in ids if after[eid] != before[eid]]
    assert changed == []
    for eid in ids:
        result = submit(app, "ana", eid, right[eid])
        assert result.verdict["status"] == "correct", (eid, right[eid], result.verdict)


def test_a_student_who_starts_after_the_edit_gets_the_new_version(app) -> None:
    add_user(app, "ana")
    add_user(app, "ben")
    old = variant_values(app, "ana", MAPS_BACK)
    _edit(app, MAPS_BACK, "compute $A^T", "Now compute $A^T")
    sync(app)
    variant_values(app, "ben", MAPS_BACK)
    with app.app_context():
        rows = {
            v.user.username: v
            for v in db.session.scalars(sa.select(Variant).where(Variant.exercise_id == MAPS_BACK))
        }
        current = db.session.get(Exercise, MAPS_BACK).current_version.id
        assert rows["ben"].version_id == current != rows["ana"].version_id
        assert "Now compute" in rows["ben"].page["prompt_html"]
        assert "Now compute" not in rows["ana"].page["prompt_html"]
        assert rows["ana"].generator.startswith("quizapp ") and "kind expression" in (
            rows["ana"].generator
        )
    assert np.array_equal(variant_values(app, "ana", MAPS_BACK)["A"], old["A"])


def test_an_answer_to_the_numbers_on_screen_is_graded_against_them_after_a_sync(app) -> None:
    """The page was open while the instructor changed the exercise and synced: the answer to the
    numbers on screen is correct and uses one attempt."""
    add_user(app, "ana")
    client = signed_in(app, "ana")
    html = client.get(_url(TWO)).get_data(as_text=True)
    x = solution_of(app, "ana", TWO)  # NumPy, from the stored numbers (the ones on the page)
    _edit(app, TWO, "coefficients: [-6, 6]", "coefficients: [-9, 9]")
    _edit(app, TWO, "Solve the system", "Solve this system")
    assert sync(app).updated == [TWO]
    variant_id = re.search(r'name="variant" value="(\d+)"', html).group(1)
    response = client.post(
        _url(TWO),
        data={
            "csrf_token": csrf_from(html),
            "variant": variant_id,
            "via": "text",
            "answer": f"{x[0]:.9f}, {x[1]:.9f}",
        },
    )
    assert response.status_code == 200
    (sub,) = stored_submissions(app)
    assert sub["status"] == "correct" and sub["score"] == 1.0


def test_an_answer_to_a_variant_that_is_no_longer_current_uses_no_attempt(app) -> None:
    add_user(app, "ana")
    client = signed_in(app, "ana")
    first = client.get(_url(TWO)).get_data(as_text=True)
    first_id = re.search(r'name="variant" value="(\d+)"', first).group(1)
    x = solution_of(app, "ana", TWO)
    # solved (typed to 9 decimals: the exact prompt's key is a float solve away from integers,
    # and a key of 0 may be computed as 1e-15): a new variant may be opened
    submit(app, "ana", TWO, text_of(x))
    with app.app_context():
        ana = services.find_user(db.session, "ana")
        second = services.new_practice_variant(
            db.session, ana, db.session.get(Exercise, TWO), SEED_SECRET
        )
        second_id = second.id
    assert str(second_id) != first_id
    stale = client.post(
        _url(TWO),
        data={"csrf_token": csrf_from(first), "variant": first_id, "via": "text", "answer": "1, 2"},
    )
    body = stale.get_data(as_text=True)
    assert stale.status_code == 409
    assert "not the one you are working on now" in body and "used no attempt" in body
    assert f'name="variant" value="{second_id}"' in body  # the current variant is shown
    assert len(stored_submissions(app)) == 1
    message = re.search(r"This answer was written for[^<]*", body)
    assert message is not None, body
    # It names the variant the student works on now as their page does, not by internal ids.
    assert "(your practice variant 2)" in message.group(0)
    assert "id" not in message.group(0).split()
    # A variant field that is no variant id is refused too, without grading, by the same rule
    # as the API's (one function): not a number, zero, past a 64-bit id, non-ASCII digits.
    for garbage_id in ("abc", "0", "-3", "9" * 30, str(2**63), "\u00b2", " 5"):
        garbage = client.post(
            _url(TWO),
            data={
                "csrf_token": csrf_from(first),
                "variant": garbage_id,
                "via": "text",
                "answer": "1, 2",
            },
        )
        text = garbage.get_data(as_text=True)
        assert garbage.status_code == 400, garbage_id
        assert "variant field" in text and "not graded" in text, garbage_id
    # A form whose action is neither submit nor preview is refused, not graded as a submit.
    odd = client.post(
        _url(TWO),
        data={
            "csrf_token": csrf_from(first),
            "variant": str(second_id),
            "via": "text",
            "answer": "1, 2",
            "action": "zzz",
        },
    )
    assert odd.status_code == 400 and "used no attempt" in odd.get_data(as_text=True)
    assert "1, 2" in odd.get_data(as_text=True)  # the typed answer stays in the form
    assert len(stored_submissions(app)) == 1
    # The JSON API says the same for a stale variant_id, and accepts the current one.
    token = _api_token(app, "ana")
    api = app.test_client()
    headers = {"Authorization": f"Bearer {token}"}
    url = f"/api/v1/exercises/{TWO}/submissions"
    refused = api.post(url, json={"answer": "1, 2", "variant_id": int(first_id)}, headers=headers)
    assert (
        refused.status_code == 409 and "not the one you are working on now" in refused.json["error"]
    )
    # The id of ana's variant of another exercise: refused, and not called "of this exercise".
    other = api.get(f"/api/v1/exercises/{MAPS_BACK}/variant", headers=headers).json
    refused = api.post(
        url, json={"answer": "1, 2", "variant_id": other["variant_id"]}, headers=headers
    )
    assert refused.status_code == 409 and refused.json["error"] == (
        "This answer was written for a variant that is not the one you are working on now in "
        "this exercise (your practice variant 2); it was not graded and used no attempt. Reload "
        "the exercise to see your current variant."
    )
    for garbage_id in ("x", 0, -1, True, 2**63, 1.5, [1]):
        refused = api.post(url, json={"answer": "1, 2", "variant_id": garbage_id}, headers=headers)
        assert refused.status_code == 400, garbage_id
        assert "'variant_id' does not say which variant" in refused.json["error"], garbage_id
    ok = api.post(url, json={"answer": "1, 2", "variant_id": second_id}, headers=headers)
    assert ok.status_code == 201
    shown = api.get(f"/api/v1/exercises/{TWO}/variant", headers=headers).json
    assert shown["variant_id"] == second_id
    assert len(stored_submissions(app)) == 2


def _api_token(app, username: str) -> str:
    with app.app_context():
        return services.create_api_token(db.session, services.find_user(db.session, username))


def test_a_seed_that_cannot_produce_a_variant_falls_back_to_the_next_derived_seed(
    app, monkeypatch
) -> None:
    add_user(app, "ana")
    with app.app_context():
        ana_id = services.find_user(db.session, "ana").id
    own = derive_seed(SEED_SECRET, ana_id, TWO, 1)
    real = BankExercise.generate

    def flaky(self, seed, revision=None):  # noqa: ANN001, ANN202
        if self.id == TWO and seed == own:
            raise BankError(self.path, None, None, f"seed {seed}: the matrix is singular")
        return real(self, seed, revision)

    monkeypatch.setattr(BankExercise, "generate", flaky)
    services.variants._generate.cache_clear()
    client = signed_in(app, "ana")
    assert client.get(_url(TWO)).status_code == 200
    with app.app_context():
        variant = db.session.scalars(sa.select(Variant).where(Variant.exercise_id == TWO)).one()
        assert variant.seed == fallback_seed(own, 1) and variant.seed_fallbacks == 1
        (failure,) = db.session.scalars(sa.select(VariantFailure)).all()
        assert failure.seed == own and "singular" in failure.error
        assert failure.user_id == ana_id and failure.variant_number == 1
    # The fallback is the variant of that seed, and it is graded as such.
    bank = load_bank(Path(app.config["QUIZAPP_EXERCISES"]))
    expected = real(bank.exercises[TWO], fallback_seed(own, 1))
    assert np.array_equal(variant_values(app, "ana", TWO)["A"], expected.values["A"])
    x = np.linalg.solve(np.asarray(expected.values["A"], float), np.asarray(expected.values["y"]))
    assert submit(app, "ana", TWO, text_of(x)).verdict["status"] == "correct"
    # The instructor sees it on the exercise's statistics page.
    page = instructor(app).get(f"/instructor/exercises/{TWO}").get_data(as_text=True)
    assert "Seeds that did not generate" in page and str(own) in page


def test_an_exercise_no_seed_of_which_generates_answers_503_and_stores_nothing(
    app, monkeypatch
) -> None:
    add_user(app, "ana")

    def broken(self, seed, revision=None):  # noqa: ANN001, ANN202
        raise BankError(self.path, None, None, f"seed {seed}: broken")

    monkeypatch.setattr(BankExercise, "generate", broken)
    services.variants._generate.cache_clear()
    response = signed_in(app, "ana").get(_url(TWO))
    assert response.status_code == 503
    page = response.get_data(as_text=True)
    assert "cannot be shown right now" in page and re.search(r"incident [0-9a-f]{12}", page)
    with app.app_context():
        assert db.session.scalar(sa.select(sa.func.count(Variant.id))) == 0
        # The instructor learns which student met it and why: the incident names the student,
        # the exercise and the seeds tried.
        from quizapp.models_instructor import Incident

        (incident,) = db.session.scalars(sa.select(Incident)).all()
        ana = db.session.scalar(sa.select(User).where(User.username == "ana"))
        assert incident.user_id == ana.id and incident.exercise_id == TWO
        own = derive_seed(SEED_SECRET, ana.id, TWO, 1)
        assert f"No variant of {TWO} could be drawn" in incident.detail
        assert str(own) in incident.detail and "broken" in incident.detail


def test_the_singular_seed_of_solve_with_inverse_falls_back_to_a_well_posed_variant() -> None:
    """Seed 5561 of 13-solve-with-inverse draws a singular A (det = -2.2e-15 in floating point):
    a student with that seed gets the first fallback that generates, an invertible A."""
    source = (EXERCISES / "03-transpose-and-products" / "13-solve-with-inverse.yaml").read_text()
    exercise = load_bank(EXERCISES).exercises["03-transpose-and-products/13-solve-with-inverse"]
    drawn = services.draw_variant(exercise, 5561)
    if not drawn.failures:  # the YAML has been tightened meanwhile: the seed generates
        assert drawn.seed == 5561
        return
    assert "singular" in drawn.failures[0][1] and drawn.failures[0][0] == 5561
    assert drawn.seed == fallback_seed(5561, len(drawn.failures))
    A = np.asarray(exercise.generate(drawn.seed).values["A"], float)
    assert np.linalg.matrix_rank(A) == A.shape[0]
    assert "inv" in source or "solve" in source


# --------------------------------------------------------------------------------------------
# The upgrade of a database made before variants were stored

#: An expression exercise whose seeds fail to generate exactly when the first draw of k is 0.
FLAKY_YAML = """title: Flaky on purpose
kind: expression
points: 10
attempts: 3
variables:
  k: {integers: [0, 4]}
answer: inv([[k, 0], [0, 1]]) @ [1, 2]
prompt: |
  Compute the thing for $k = {{ k }}$. Give exact values.
"""


def _old_database(tmp_path: Path):
    """An app whose database is at the last revision before stored variants, filled as that
    release filled it (its columns only): the bank synced, students, variants and submissions."""
    from test_web_support import database_url

    from quizapp.web import create_app
    from quizapp.web.database import upgrade_database

    app = create_app(
        {
            "INSTANCE_PATH": tmp_path / "instance",
            "SQLALCHEMY_DATABASE_URI": database_url(tmp_path),
            "TESTING": True,
            "QUIZAPP_EXERCISES": EXERCISES,
            "QUIZAPP_SEED_SECRET": SEED_SECRET,
        }
    )
    upgrade_database(app, "instructor_0002")
    return app


def test_the_upgrade_stores_every_existing_variant_with_the_numbers_it_showed(tmp_path) -> None:
    app = _old_database(tmp_path)
    bank = load_bank(EXERCISES)
    chosen = ["01-linear-systems/06-two-by-two", MAPS_BACK, "05-attention/01-attention-weights"]
    from quizapp.bank import load_exercise_source

    flaky = load_exercise_source("01-linear-systems/99-flaky", FLAKY_YAML)
    failing = next(s for s in range(200) if _fails(flaky, s))
    working = next(s for s in range(200) if not _fails(flaky, s))
    # A multi-head exercise that names no guard: release 0.1 guarded none, new variants guard all
    # (draw revision 2); the upgrade stores what 0.1 showed. Seeds where the two differ.
    multi = (EXERCISES / "05-attention" / "06-multi-head.yaml").read_text(encoding="utf-8")
    unguarded = load_exercise_source(
        "05-attention/98-unguarded",
        "\n".join(line for line in multi.splitlines() if "guard:" not in line) + "\n",
    )
    redrawn = [
        s
        for s in range(3000, 3100)
        if freeze(unguarded.generate(s, FIRST_REVISION)) != freeze(unguarded.generate(s))
    ][:2]
    assert len(redrawn) == 2
    with app.app_context():
        conn = db.session.connection()
        now = services.utcnow()
        conn.execute(
            sa.text(
                "INSERT INTO users (username, username_key, display_name, role, password_hash, "
                "active, created_at) VALUES ('ana', 'ana', '', 'student', 'x', :t, :now), "
                "('ben', 'ben', '', 'student', 'x', :t, :now)"
            ),
            {"t": True, "now": now},
        )
        conn.execute(
            sa.text(
                "INSERT INTO quizzes (id, title, description, position, content_hash, archived, "
                "created_at, updated_at) VALUES ('01-linear-systems', 'Q', '', 1, 'h', :f, :now,"
                " :now), ('02-matrices-and-maps', 'Q', '', 2, 'h', :f, :now, :now), "
                "('05-attention', 'Q', '', 5, 'h', :f, :now, :now)"
            ),
            {"f": False, "now": now},
        )
        exercises = {eid: bank.exercises[eid] for eid in chosen}
        exercises["01-linear-systems/99-flaky"] = flaky
        exercises["05-attention/98-unguarded"] = unguarded
        version_ids = {}
        for eid, ex in exercises.items():
            conn.execute(
                sa.text(
                    "INSERT INTO exercises (id, quiz_id, title, kind, points, attempts, practice, "
                    "position, concepts, current_hash, archived, created_at, updated_at) VALUES "
                    "(:id, :quiz, :title, :kind, 10, 3, :t, 0, '[]', :hash, :f, :now, :now)"
                ),
                {
                    "id": eid,
                    "quiz": eid.split("/")[0],
                    "title": ex.title,
                    "kind": ex.spec.kind,
                    "hash": ex.content_hash,
                    "t": True,
                    "f": False,
                    "now": now,
                },
            )
            version_ids[eid] = conn.execute(
                sa.text(
                    "INSERT INTO exercise_versions (exercise_id, content_hash, source, title, "
                    "points, attempts, created_at) VALUES (:id, :hash, :src, :title, 10, 3, :now) "
                    "RETURNING id"
                ),
                {
                    "id": eid,
                    "hash": ex.content_hash,
                    "src": ex.source,
                    "title": ex.title,
                    "now": now,
                },
            ).scalar_one()
        rows = [(1, eid, 1000 + i) for i, eid in enumerate(chosen)]
        rows += [(2, eid, 2000 + i) for i, eid in enumerate(chosen)]
        rows += [
            (1, "01-linear-systems/99-flaky", failing),
            (2, "01-linear-systems/99-flaky", working),
            (1, "05-attention/98-unguarded", redrawn[0]),
            (2, "05-attention/98-unguarded", redrawn[1]),
        ]
        variant_ids = {}
        for user_id, eid, seed in rows:
            variant_ids[(user_id, eid)] = conn.execute(
                sa.text(
                    "INSERT INTO variants (user_id, exercise_id, variant_number, seed, version_id,"
                    " created_at) VALUES (:u, :e, 1, :s, :v, :now) RETURNING id"
                ),
                {"u": user_id, "e": eid, "s": seed, "v": version_ids[eid], "now": now},
            ).scalar_one()
        # ana answered the two-by-two (a submission as that release stored it).
        conn.execute(
            sa.text(
                "INSERT INTO submissions (variant_id, user_id, exercise_id, version_id, "
                "answer_format, raw_answer, answer_hash, verdict, status, score, points, "
                "mistakes, used_attempt, source, created_at) VALUES (:v, 1, :e, :ver, 'text', "
                "'1, 2', 'h', :verdict, 'incorrect', 0, 0, '[]', :t, 'web', :now)"
            ),
            {
                "v": variant_ids[(1, chosen[0])],
                "e": chosen[0],
                "ver": version_ids[chosen[0]],
                "verdict": json.dumps({"status": "incorrect", "score": 0.0, "message": "x"}),
                "t": True,
                "now": now,
            },
        )
        db.session.commit()

    from quizapp.web.database import upgrade_database

    upgrade_database(app)  # to head: fills the stored fields

    with app.app_context():
        stored = {
            (v.user_id, v.exercise_id): v
            for v in db.session.scalars(sa.select(Variant).options(sa.orm.undefer_group("stored")))
        }
        for user_id, eid, seed in rows:
            variant = stored[(user_id, eid)]
            if seed == failing:
                continue
            # What the previous release showed: the first draw revision of every kind.
            drawn = exercises[eid].generate(seed, FIRST_REVISION)
            assert variant.seed == seed and variant.seed_fallbacks == 0
            assert variant.record == json.loads(
                json.dumps({**freeze(drawn), "kind": exercises[eid].spec.kind})
            )
            assert variant.page == render_page(drawn)
        # The variant whose seed never generated (its student could only see an error) got the
        # fallback a new variant gets; the failure is on record.
        lost = stored[(1, "01-linear-systems/99-flaky")]
        assert lost.seed == services.draw_variant(flaky, failing).seed != failing
        assert lost.seed_fallbacks >= 1
        assert db.session.scalars(sa.select(VariantFailure.seed)).all()[0] == failing
        # Submissions are untouched.
        assert db.session.scalar(sa.select(sa.func.count(Submission.id))) == 1
        users = db.session.scalars(sa.select(User.username).order_by(User.id)).all()
        assert users == ["ana", "ben"]


def _fails(exercise, seed: int) -> bool:
    try:
        exercise.generate(seed)
    except BankError:
        return True
    return False


def test_the_upgrade_refuses_a_variant_with_submissions_that_no_longer_generates(
    tmp_path, caplog
) -> None:
    from quizapp.bank import load_exercise_source
    from quizapp.web.database import upgrade_database

    app = _old_database(tmp_path)
    flaky = load_exercise_source("01-linear-systems/99-flaky", FLAKY_YAML)
    failing = next(s for s in range(200) if _fails(flaky, s))
    with app.app_context():
        conn = db.session.connection()
        now = services.utcnow()
        conn.execute(
            sa.text(
                "INSERT INTO users (username, username_key, display_name, role, password_hash, "
                "active, created_at) VALUES ('ana', 'ana', '', 'student', 'x', :t, :now)"
            ),
            {"t": True, "now": now},
        )
        conn.execute(
            sa.text(
                "INSERT INTO quizzes (id, title, description, position, content_hash, archived, "
                "created_at, updated_at) VALUES ('01-linear-systems', 'Q', '', 1, 'h', :f, :now,"
                " :now)"
            ),
            {"f": False, "now": now},
        )
        conn.execute(
            sa.text(
                "INSERT INTO exercises (id, quiz_id, title, kind, points, attempts, practice, "
                "position, concepts, current_hash, archived, created_at, updated_at) VALUES "
                "('01-linear-systems/99-flaky', '01-linear-systems', 'F', 'expression', 10, 3, "
                ":t, 0, '[]', :h, :f, :now, :now)"
            ),
            {"t": True, "f": False, "h": flaky.content_hash, "now": now},
        )
        conn.execute(
            sa.text(
                "INSERT INTO exercise_versions (exercise_id, content_hash, source, title, points,"
                " attempts, created_at) VALUES ('01-linear-systems/99-flaky', :h, :src, 'F', 10,"
                " 3, :now)"
            ),
            {"h": flaky.content_hash, "src": FLAKY_YAML, "now": now},
        )
        conn.execute(
            sa.text(
                "INSERT INTO variants (user_id, exercise_id, variant_number, seed, version_id, "
                "created_at) VALUES (1, '01-linear-systems/99-flaky', 1, :s, 1, :now)"
            ),
            {"s": failing, "now": now},
        )
        conn.execute(
            sa.text(
                "INSERT INTO submissions (variant_id, user_id, exercise_id, version_id, "
                "answer_format, raw_answer, answer_hash, verdict, status, score, points, "
                "mistakes, used_attempt, source, created_at) VALUES (1, 1, "
                "'01-linear-systems/99-flaky', 1, 'text', '1', 'h', '{}', 'incorrect', 0, 0, "
                "'[]', :t, 'web', :now)"
            ),
            {"t": True, "now": now},
        )
        db.session.commit()
    with pytest.raises(SystemExit):  # Flask-Migrate logs the error and exits 1
        upgrade_database(app)
    assert "has submissions but no longer generates" in caplog.text
    assert "Nothing was changed" in caplog.text
    with app.app_context():  # still the previous revision, whole
        conn = db.session.connection()
        assert conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar() == (
            "instructor_0002"
        )
        columns = {c["name"] for c in sa.inspect(conn).get_columns("variants")}
        assert "record" not in columns
        assert conn.execute(sa.text("SELECT count(*) FROM submissions")).scalar() == 1


def test_the_regrade_example_of_docs_live_course_is_what_the_command_prints(
    app, tmp_path, db_url, monkeypatch
) -> None:
    """docs/live-course.md shows a dry run of fixing a wrong key: the same scenario here gives
    the same lines (the version hash and the lines shown as ``...`` aside)."""
    from click.testing import CliRunner

    from quizapp.cli import main

    _edit(app, MAPS_BACK, "answer: transpose(A) @ y", "answer: 2 * (transpose(A) @ y)")
    sync(app)
    add_user(app, "ana")
    add_user(app, "ben")

    def right(name: str) -> np.ndarray:
        values = variant_values(app, name, MAPS_BACK)
        return np.asarray(values["A"], float).T @ np.asarray(values["y"], float)

    submit(app, "ana", MAPS_BACK, text_of(2 * right("ana")))
    submit(app, "ben", MAPS_BACK, text_of(right("ben")))
    submit(app, "ben", MAPS_BACK, "9, 9, 9")
    _edit(app, MAPS_BACK, "answer: 2 * (transpose(A) @ y)", "answer: transpose(A) @ y")
    sync(app)
    doc = (EXERCISES.parent / "docs" / "live-course.md").read_text(encoding="utf-8")
    block = doc.split("```console\n", 1)[1].split("```", 1)[0]
    commands = [line[2:] for line in block.splitlines() if line.startswith("$ ")]
    assert commands[0] == f"quizapp regrade {MAPS_BACK} --dry-run"
    shown = block.split("\n$ ")[0].splitlines()[1:]
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("QUIZAPP_INSTANCE", str(tmp_path / "instance"))
    monkeypatch.setenv("QUIZAPP_EXERCISES", str(app.config["QUIZAPP_EXERCISES"]))
    monkeypatch.setenv("QUIZAPP_SEED_SECRET", SEED_SECRET)
    result = CliRunner().invoke(main, commands[0].split()[1:])
    assert result.exit_code == 0, result.output
    printed = result.output.splitlines()
    for line in shown:
        if line.strip() == "...":
            continue
        regex = re.escape(line).replace(re.escape("..."), "[0-9a-f]+")
        assert any(re.fullmatch(regex, out) for out in printed), (line, printed)
