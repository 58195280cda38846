"""The examples of docs/answer-syntax.md are true: each documented ``curl`` preview request is
sent to the app, and its answer compared with the one the page shows (a documented text ending
in `` ...`` is a prefix of the real one); the settings it names exist with the defaults it says."""

from __future__ import annotations

import json
import re
from pathlib import Path

from test_web_support import REPO, register, synced_app

DOC = REPO / "docs" / "answer-syntax.md"


def _examples() -> list[tuple[str, dict, dict]]:
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    out = []
    for m in re.finditer(
        r"curl -s -X POST http://127\.0\.0\.1:5000(\S+) \\\n.*?-d '([^']+)'\n# (\{.*\})\n", block
    ):
        out.append((m.group(1), json.loads(m.group(2)), json.loads(m.group(3))))
    return out


def _matches(shown, real) -> bool:
    if isinstance(shown, str) and shown.endswith(" ..."):
        return isinstance(real, str) and real.startswith(shown[: -len(" ...")])
    return shown == real


def test_the_documented_previews_are_what_the_api_answers(tmp_path: Path) -> None:
    examples = _examples()
    assert len(examples) == 2
    app = synced_app(tmp_path)
    register(app.test_client(), "ana")
    client = app.test_client()
    token = client.post("/api/v1/token", json={"username": "ana", "password": "correct horse"})
    headers = {"Authorization": f"Bearer {token.get_json()['token']}"}
    for path, body, shown in examples:
        resp = client.post(path, json=body, headers=headers)
        assert resp.status_code == 200, (path, body)
        real = resp.get_json()
        assert set(shown) == set(real), (body, sorted(real))
        for key, value in shown.items():
            assert _matches(value, real[key]), (body, key, real[key])


def test_the_settings_the_page_names_exist_with_their_defaults(tmp_path: Path) -> None:
    from test_web_support import make_app

    text = DOC.read_text(encoding="utf-8")
    assert "`QUIZAPP_LIMIT_PREVIEW` (default `240 per minute`" in text
    app = make_app(tmp_path)
    assert app.config["QUIZAPP_LIMIT_PREVIEW"] == "240 per minute"
    assert app.config["QUIZAPP_LIMIT_SUBMIT"] == "30 per minute"
