"""A broken YAML file during ``sync`` leaves the previous version of that exercise live (students
keep answering it) and reports the error, while the rest of the bank syncs (issue 6)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from test_web_support import EXERCISES, login, make_app, post_text, url_of

from quizapp import services
from quizapp.models import Exercise, db

BROKEN = "01-linear-systems/06-two-by-two"
EDITED = "01-linear-systems/05-deck-system"
PW = "correct horse battery"


def test_broken_yaml_keeps_the_previous_version_live_and_the_rest_syncs(tmp_path: Path) -> None:
    bank = tmp_path / "bank"
    shutil.copytree(EXERCISES, bank)
    app = make_app(tmp_path, QUIZAPP_EXERCISES=bank)
    with app.app_context():
        assert services.sync_folder(db.session, bank).errors == []
        services.create_user(db.session, "ana", PW)
        old_broken = db.session.get(Exercise, BROKEN).current_hash
        old_edited = db.session.get(Exercise, EDITED).current_hash
    client = app.test_client()
    assert login(client, "ana", PW).status_code == 302
    before = client.get(url_of(BROKEN)).get_data(as_text=True)

    broken = bank / f"{BROKEN}.yaml"
    broken.write_text(broken.read_text() + "\nparams: [unclosed\n  - {\n")
    edited = bank / f"{EDITED}.yaml"
    edited.write_text(edited.read_text().replace("points: 10", "points: 12", 1))
    if "points: 12" not in edited.read_text():
        edited.write_text(edited.read_text() + "\npoints: 12\n")
    with app.app_context():
        report = services.sync_folder(db.session, bank)
        assert len(report.errors) == 1 and "06-two-by-two.yaml:" in report.errors[0]
        assert report.kept_previous == [BROKEN]
        assert report.updated == [EDITED]
        ex = db.session.get(Exercise, BROKEN)
        assert ex.current_hash == old_broken and not ex.archived
        assert ex.sync_error == report.errors[0]
        new = db.session.get(Exercise, EDITED)
        assert new.current_hash != old_edited and new.points == 12.0
    # The broken exercise is still live: same page, and answers are graded.
    page = client.get(url_of(BROKEN))
    assert page.status_code == 200

    def main(html: str) -> str:
        return re.sub(r'name="csrf_token"[^>]*>', "", html.split("<main", 1)[1])

    assert main(page.get_data(as_text=True)) == main(before)
    assert post_text(client, BROKEN, "1 2").status_code == 200
