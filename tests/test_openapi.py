"""``GET /api/v1/openapi.json``: a valid OpenAPI 3.1 document that cannot drift from the API.

- it validates (openapi-spec-validator);
- it documents exactly the routes the app registers under ``/api/v1`` (paths and methods; the
  catch-all 404 route aside), so a new endpoint without a description fails here;
- real responses of every endpoint, for every exercise of the bundled bank and every answer form,
  match the response schemas it gives, and every documented 2xx response is seen;
- request bodies the API accepts match the request schemas, and bodies it refuses do not.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from test_web_support import synced_app

from quizapp import services
from quizapp.bank import load_bank
from quizapp.models import db
from quizapp.web.api import openapi_document

REPO = Path(__file__).resolve().parent.parent
PREFIX = "/api/v1"
PASSWORD = "correct horse"


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    return openapi_document()


@pytest.fixture()
def app(tmp_path: Path):
    app = synced_app(tmp_path, RATELIMIT_ENABLED=False)
    with app.app_context():
        services.create_user(db.session, "ana", PASSWORD)
    return app


def test_the_document_is_valid_openapi_3_1(spec: dict[str, Any]) -> None:
    validate(spec)
    assert spec["openapi"].startswith("3.1")
    assert spec["servers"] == [{"url": PREFIX}]


def test_it_is_served_as_json_without_authentication(app, spec: dict[str, Any]) -> None:
    resp = app.test_client().get(f"{PREFIX}/openapi.json")
    assert resp.status_code == 200 and resp.mimetype == "application/json"
    assert resp.get_json() == spec


def _registered(app) -> set[tuple[str, str]]:
    out = set()
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith(PREFIX + "/") or rule.endpoint == "api.not_found":
            continue
        path = re.sub(r"<(?:[a-z]+:)?(\w+)>", r"{\1}", rule.rule[len(PREFIX) :])
        for method in rule.methods or ():
            if method not in ("HEAD", "OPTIONS"):
                out.add((path, method.lower()))
    return out


def _documented(spec: dict[str, Any]) -> set[tuple[str, str]]:
    methods = {"get", "post", "put", "patch", "delete"}
    return {(p, m) for p, item in spec["paths"].items() for m in item if m in methods}


def test_every_registered_route_is_documented_and_nothing_else(app, spec: dict[str, Any]) -> None:
    registered, documented = _registered(app), _documented(spec)
    assert registered - documented == set(), "routes missing from quizapp/web/openapi.yaml"
    assert documented - registered == set(), "documented routes the app does not have"
    assert len(registered) >= 10


# ---------------------------------------------------------------------------------------------
# Real responses against the schemas


def _resolve(spec: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        parts = node["$ref"].removeprefix("#/").split("/")
        node = spec
        for part in parts:
            node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _validator(spec: dict[str, Any], schema: dict[str, Any]) -> Draft202012Validator:
    # The schema with the document's components beside it, so "#/components/..." resolves.
    return Draft202012Validator({**schema, "components": spec["components"]})


def _response_schema(spec: dict[str, Any], path: str, method: str, status: int) -> dict[str, Any]:
    responses = spec["paths"][path][method]["responses"]
    assert str(status) in responses, f"{method.upper()} {path} answered {status}, not documented"
    response = _resolve(spec, responses[str(status)])
    return response["content"]["application/json"]["schema"]


class Checked:
    """A test client whose every API response is checked against the document."""

    def __init__(self, app, spec: dict[str, Any]) -> None:
        self.client = app.test_client()
        self.spec = spec
        self.seen: set[tuple[str, str, int]] = set()
        self.token = ""

    def call(self, method: str, path: str, template: str, *, auth: bool = True, **kw: Any) -> Any:
        headers = {"Authorization": f"Bearer {self.token}"} if auth and self.token else {}
        resp = self.client.open(PREFIX + path, method=method, headers=headers, **kw)
        schema = _response_schema(self.spec, template, method.lower(), resp.status_code)
        body = resp.get_json()
        errors = [e.message for e in _validator(self.spec, schema).iter_errors(body)]
        assert errors == [], (method, path, resp.status_code, errors[:5])
        self.seen.add((template, method.lower(), resp.status_code))
        return resp.status_code, body


def _exercise_path(exercise_id: str, what: str) -> str:
    return f"/exercises/{exercise_id}/{what}"


def test_real_responses_match_the_documented_schemas(app, spec: dict[str, Any]) -> None:
    api = Checked(app, spec)
    V = "/exercises/{quiz_id}/{name}/variant"
    NEW = "/exercises/{quiz_id}/{name}/variants"
    SUBS = "/exercises/{quiz_id}/{name}/submissions"
    PREVIEW = "/exercises/{quiz_id}/{name}/preview"

    assert api.call("GET", "/quizzes", "/quizzes")[0] == 401
    assert (
        api.call("POST", "/token", "/token", json={"username": "ana", "password": "no"})[0] == 401
    )
    assert api.call("POST", "/token", "/token", json={"username": 5})[0] == 400
    status, body = api.call(
        "POST", "/token", "/token", json={"username": "ana", "password": PASSWORD}
    )
    assert status == 201
    api.token = body["token"]
    assert api.call("GET", "/csrf-token", "/csrf-token")[0] == 200
    status, quizzes = api.call("GET", "/quizzes", "/quizzes")
    assert status == 200 and quizzes["quizzes"]

    # Every exercise of the bank: its variant (every answer form the bank uses).
    bank = load_bank(REPO / "exercises")
    forms = set()
    for exercise_id in bank.exercises:
        status, variant = api.call("GET", _exercise_path(exercise_id, "variant"), V)
        assert status == 200, (exercise_id, variant)
        forms.add(variant["answer_form"]["type"])
    assert forms == {
        "scalar", "vector", "matrix", "partial_matrix", "point_on_line", "choice", "index", "parts"
    }  # fmt: skip

    deck = "01-linear-systems/05-deck-system"  # the fixed system 5x + y = 15, 3x + 2y = 16
    # The answer preview: read, never graded (valid and invalid, text and grid).
    for body, status in (
        ({"answer": "(2, 5)"}, "valid"),
        ({"answer": "(2, 5"}, "invalid"),
        ({"cells": [["2"], ["5,5"]]}, "invalid"),
    ):
        code, read = api.call("POST", _exercise_path(deck, "preview"), PREVIEW, json=body)
        assert (code, read["status"]) == (200, status), (body, read)
    assert api.call("POST", _exercise_path(deck, "preview"), PREVIEW, json={"answer": 1})[0] == 400
    assert (
        api.call("POST", _exercise_path(deck, "submissions"), SUBS, json={"cells": [["5"], ["2"]]})[
            0
        ]
        == 201
    )
    assert (
        api.call("POST", _exercise_path(deck, "submissions"), SUBS, json={"answer": "(2, 5"})[0]
        == 201
    )
    status, result = api.call(
        "POST", _exercise_path(deck, "submissions"), SUBS, json={"answer": "(2, 5)"}
    )
    assert status == 201 and result["status"] == "correct" and result["finished"]
    status, variant = api.call("GET", _exercise_path(deck, "variant"), V)
    assert "expected" in variant and variant["solution"]
    status, subs = api.call("GET", _exercise_path(deck, "submissions"), SUBS)
    assert [s["answer_format"] for s in subs["submissions"]] == ["cells", "text", "text"]
    solved_again = {"answer": "(2, 6)"}  # the variant is solved: no more answers
    assert api.call("POST", _exercise_path(deck, "submissions"), SUBS, json=solved_again)[0] == 409
    assert api.call("POST", _exercise_path(deck, "variants"), NEW)[0] == 409  # no practice here

    # A practice variant once the current one is finished (three wrong answers).
    two = "01-linear-systems/06-two-by-two"
    for wrong in ("1e9 1e9", "2e9 2e9", "3e9 3e9"):
        assert (
            api.call("POST", _exercise_path(two, "submissions"), SUBS, json={"answer": wrong})[0]
            == 201
        )
    status, practice = api.call("POST", _exercise_path(two, "variants"), NEW)
    assert status == 201 and practice["variant_number"] == 2

    assert api.call("POST", _exercise_path(two, "submissions"), SUBS, json={"answer": 5})[0] == 400
    stale = {"answer": "1 2", "variant_id": practice["variant_id"] - 1}  # the finished variant
    assert api.call("POST", _exercise_path(two, "submissions"), SUBS, json=stale)[0] == 409
    assert api.call("POST", _exercise_path(two, "preview"), PREVIEW, json=stale)[0] == 409

    # A multi-part exercise: its parts previewed, then answered part by part until finished.
    steps = "05-attention/01a-weights-step-by-step"
    status, variant = api.call("GET", _exercise_path(steps, "variant"), V)
    assert [p["name"] for p in variant["parts"]] == ["S", "W"]
    for parts, status in (
        ({"S": "1e9 0 0; 0 0 0"}, "valid"),
        ({"S": [["1", "x", "0"], ["0", "0", "0"]]}, "invalid"),
    ):
        code, read = api.call(
            "POST", _exercise_path(steps, "preview"), PREVIEW, json={"parts": parts}
        )
        assert (code, read["status"], set(read["parts"])) == (200, status, {"S"}), read
    for parts in (  # wrong in every cell (no variant has such scores, no weight is 2 or 3, so
        # W matches no S given either): no points, whatever the variant
        {"S": "1e9 1e9 1e9; 1e9 1e9 1e9"},
        {"S": [["2e9"] * 3, ["2e9"] * 3], "W": "2 2 2; 2 2 2"},
        {"S": "3e9 3e9 3e9; 3e9 3e9 3e9", "W": "3 3 3; 3 3 3"},
        {"S": "4e9 4e9 4e9; 4e9 4e9 4e9"},
    ):
        status, result = api.call(
            "POST", _exercise_path(steps, "submissions"), SUBS, json={"parts": parts}
        )
        assert status == 201 and set(result["parts"]) == {"S", "W"}, result
    assert result["finished"] and not result["solved"]
    status, variant = api.call("GET", _exercise_path(steps, "variant"), V)
    assert variant["expected"].startswith("S = ") and all(p["solution"] for p in variant["parts"])
    status, subs = api.call("GET", _exercise_path(steps, "submissions"), SUBS)
    assert {s["answer_format"] for s in subs["submissions"]} == {"parts"}
    assert api.call("GET", _exercise_path("01-linear-systems/nope", "variant"), V)[0] == 404
    status, progress = api.call("GET", "/progress", "/progress")
    assert status == 200 and progress["points_earned"] == 10.0
    assert progress["points_available"] == sum(e["points"] for e in progress["exercises"])
    assert api.call("GET", "/openapi.json", "/openapi.json", auth=False)[0] == 200
    assert api.call("DELETE", "/token", "/token")[0] == 200
    assert api.call("GET", "/progress", "/progress")[0] == 401

    documented_2xx = {
        (path, method, int(code))
        for path, item in spec["paths"].items()
        for method, op in item.items()
        if method != "parameters"
        for code in op["responses"]
        if code.startswith("2")
    }
    assert documented_2xx - api.seen == set()


def test_request_schemas_agree_with_what_the_api_accepts(app, spec: dict[str, Any]) -> None:
    schema = spec["components"]["schemas"]["SubmissionRequest"]
    validator = _validator(spec, schema)
    client = app.test_client()
    token = client.post(f"{PREFIX}/token", json={"username": "ana", "password": PASSWORD})
    headers = {"Authorization": "Bearer " + token.get_json()["token"]}
    url = f"{PREFIX}/exercises/01-linear-systems/06-two-by-two/submissions"
    variant = client.get(url.removesuffix("submissions") + "variant", headers=headers).get_json()
    for body in (  # wrong answers (no variant solves to such numbers): three attempts, 201 each
        {"answer": "1e9 1e9"},
        {"cells": [["2e9"], ["2e9"]]},
        {"answer": "3e9 3e9", "variant_id": variant["variant_id"]},
    ):
        assert validator.is_valid(body)
        assert client.post(url, json=body, headers=headers).status_code == 201
    for body in (
        {"answer": 5},
        {"answer": "1", "cells": [["1"]]},
        {"cells": "1 2"},
        {"parts": "S=1"},
        {"parts": {"S": 5}},
        {"parts": {"S": "1"}, "answer": "1"},
        {},
        {"x": "1"},
    ):
        assert not validator.is_valid(body), body
        assert client.post(url, json=body, headers=headers).status_code == 400, body
    steps = f"{PREFIX}/exercises/05-attention/01a-weights-step-by-step/submissions"
    for body in (  # a multi-part exercise: some parts, as text or as a grid
        {"parts": {"S": "1e9 0 0; 0 0 0"}},
        {"parts": {"S": [["2e9", "0", "0"], ["0", "0", "0"]], "W": "1 0 0; 1 0 0"}},
    ):
        assert validator.is_valid(body)
        assert client.post(steps, json=body, headers=headers).status_code == 201, body
    token_schema = _validator(spec, spec["components"]["schemas"]["TokenRequest"])
    assert token_schema.is_valid({"username": "ana", "password": PASSWORD})
    assert not token_schema.is_valid({"username": "ana"})
