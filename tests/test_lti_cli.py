"""``quizapp lti ...`` through click's runner, on the database of a served tool (configured by
the environment, as in production), and the examples of docs/lms.md checked against what the
commands print."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import requests
from click.testing import CliRunner
from lti_platform import Platform
from lti_support import (
    COURSE,
    QUIZ,
    TWO,
    Tool,
    platform_fixture,  # noqa: F401  (fixture)
    quiz_points,
    solve_two,
    submit_cells,
    tool_fixture,  # noqa: F401  (fixture)
    username_of,
)

from quizapp.cli import main

DOCS = Path(__file__).resolve().parent.parent / "docs" / "lms.md"


@pytest.fixture()
def cli(tool: Tool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Tool:
    monkeypatch.setenv("DATABASE_URL", tool.app.config["SQLALCHEMY_DATABASE_URI"])
    monkeypatch.setenv("QUIZAPP_INSTANCE", str(tmp_path / "instance"))
    monkeypatch.setenv("QUIZAPP_SEED_SECRET", tool.app.config["QUIZAPP_SEED_SECRET"])
    monkeypatch.setenv("QUIZAPP_EXERCISES", str(tool.app.config["QUIZAPP_EXERCISES"]))
    monkeypatch.delenv("QUIZAPP_BASE_URL", raising=False)
    return tool


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(main, ["lti", *args], input=input, catch_exceptions=False)


def doc_block(after: str) -> str:
    """The first fenced block of docs/lms.md after the line containing ``after``."""
    text = DOCS.read_text(encoding="utf-8")
    start = text.index(after)
    m = re.search(r"```[a-z]*\n(.*?)```", text[start:], re.S)
    assert m, f"no code block after {after!r} in docs/lms.md"
    return m.group(1)


def test_config_prints_what_the_docs_show(cli: Tool) -> None:
    shown = doc_block("<!-- example: config -->")
    command, _, output = shown.partition("\n")
    assert command == "$ quizapp lti config --base-url https://quiz.example.edu"
    result = run("config", "--base-url", "https://quiz.example.edu")
    assert result.exit_code == 0, result.output
    assert result.output == output


def test_config_json_is_canvas_json(cli: Tool) -> None:
    result = run("config", "--base-url", "https://quiz.example.edu", "--json")
    data = json.loads(result.output)
    assert data["oidc_initiation_url"] == "https://quiz.example.edu/lti/login"
    assert data["public_jwk_url"] == "https://quiz.example.edu/lti/jwks"
    assert data["extensions"][0]["domain"] == "quiz.example.edu"
    # The same as the served /lti/config.json, but for the served host.
    served = requests.get(cli.url + "/lti/config.json").json()
    assert served["target_link_uri"] == cli.url + "/lti/launch"
    assert served["scopes"] == data["scopes"]


def test_register_list_remove_as_the_docs_show(cli: Tool) -> None:
    shown = doc_block("<!-- example: register -->")
    lines = shown.splitlines()
    command = " ".join(part.strip().rstrip("\\").strip() for part in lines[:7])
    args = command.split()[3:]  # past "$ quizapp lti"
    assert command.startswith("$ quizapp lti register --issuer https://canvas.instructure.com")
    result = run(*args)
    assert result.exit_code == 0, result.output
    expected = "\n".join(lines[7:]) + "\n"
    kid = re.search(r"tool key: (\S+)", result.output).group(1)
    assert result.output == expected.replace("KEY-ID", kid)
    # Registering again adds a deployment and keeps the first one.
    again = run(*args[:-2], "--deployment-id", "2:more")
    assert "Updated https://canvas.instructure.com (client 10000000000123)." in again.output
    assert "deployments added: 2:more" in again.output
    listed = run("list")
    assert (
        "client 10000000000123" in listed.output and "deployments: 1:4f1e, 2:more" in listed.output
    )
    # Removing needs the client id when an issuer has several; --yes skips the question.
    removed = run("remove", "--issuer", "https://canvas.instructure.com", "--yes")
    assert removed.exit_code == 0, removed.output
    assert removed.output.startswith(
        "Removed https://canvas.instructure.com (client 10000000000123): "
    )
    missing = run("remove", "--issuer", "https://canvas.instructure.com", "--yes")
    assert (
        missing.exit_code == 1
        and "No registration https://canvas.instructure.com" in missing.output
    )


def test_register_refuses_bad_values_naming_the_option(cli: Tool) -> None:
    base = [
        "register",
        "--issuer",
        "https://lms.example",
        "--client-id",
        "c",
        "--token-url",
        "https://lms.example/t",
        "--jwks-url",
        "https://lms.example/k",
    ]
    result = run(*base, "--auth-url", "lms.example/auth")
    assert result.exit_code == 1
    assert (
        "--auth-url must be an absolute https:// (or http://) URL, got 'lms.example/auth'"
        in result.output
    )
    result = run(*base, "--auth-url", "https://lms.example/a", "--deployment-id", "x" * 300)
    assert result.exit_code == 1 and "--deployment-id must be 1 to 255" in result.output


def test_send_grades_sends_changed_ones_and_force_resends(cli: Tool, platform: Platform) -> None:
    link = platform.add_link(
        COURSE,
        "Linear",
        {"quizapp_quiz": QUIZ},
        lineitem={
            "scoreMaximum": quiz_points(QUIZ),
            "label": "Linear",
            "resourceId": f"quiz:{QUIZ}",
        },
    )
    browser = requests.Session()
    assert cli.launch(browser, "student-1", {"kind": "resource", "link": link}).status_code == 302
    x = solve_two(cli, username_of(cli, "student-1"))
    submit_cells(cli, browser, TWO, [[x[0]], [x[1]]])
    result = run("send-grades", QUIZ)
    assert result.exit_code == 0, result.output
    assert (
        result.output
        == f"Grades of quiz {QUIZ}: sent 1, unchanged 0, nothing to send 0, failed 0.\n"
    )
    assert run("send-grades", QUIZ).output.endswith(
        "sent 0, unchanged 1, nothing to send 0, failed 0.\n"
    )
    assert "sent 1, unchanged 0" in run("send-grades", QUIZ, "--force").output
    item = platform.links[link]["lineitem"]
    assert [s["scoreGiven"] for s in platform.scores[item]] == [10.0, 10.0]
    # The exercise alone: no course links it.
    result = run("send-grades", TWO)
    assert (
        result.exit_code == 1 and "No LMS course has a grade column for exercise" in result.output
    )
    # A failure: exit status 1 and the LMS's answer.
    platform.score_refusal = (403, {"errors": [{"message": "Course not published"}]})
    result = run("send-grades", QUIZ, "--force")
    assert result.exit_code == 1
    assert "failed: The LMS answered HTTP 403: Course not published." in result.output
    assert "1 grades were not sent; they stay queued" in result.output
    platform.score_refusal = None
    result = run("retry")
    assert result.output.startswith("Queued grades: sent 0"), result.output  # not due yet


def test_sync_roster_and_rotate_key(cli: Tool, platform: Platform) -> None:
    assert "No LMS course with a member list yet" in run("sync-roster").output
    link = platform.add_link(COURSE, "Linear", {"quizapp_quiz": QUIZ})
    assert (
        cli.launch(requests.Session(), "teacher-1", {"kind": "resource", "link": link}).status_code
        == 302
    )
    result = run("sync-roster")
    assert result.exit_code == 0, result.output
    assert result.output == (
        "Linear Algebra 101: 2 created, 0 updated, 1 unchanged, 0 inactive\n"
        "  created student-1\n  created student-2\n"
    )
    assert run("sync-roster", "--course", "nope").exit_code == 1
    old = requests.get(cli.url + "/lti/jwks").json()["keys"][0]["kid"]
    result = run("rotate-key")
    new = requests.get(cli.url + "/lti/jwks").json()["keys"]
    assert [k["kid"] for k in new] != [old] and len(new) == 1
    assert result.output == f"New tool key {new[0]['kid']}; the old one is no longer published.\n"
