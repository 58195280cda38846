"""docs/json-api.md's ``curl`` examples, run against the app (Flask's test client).

Every ``curl`` line of the page's ``bash`` blocks is sent as written (method, path, headers, body;
``$TOKEN`` is the token the page's first command obtains), in order, as the student ``ana`` with
the password the page uses.  Each must answer 2xx; where the page shows the response in ``#``
comment lines under the command, the response must hold exactly the fields shown (a ``...`` in
the comment leaves the fields there out of the comparison).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from test_docs import REPO, blocks
from test_web_support import synced_app

from quizapp import services
from quizapp.models import db

PAGE = REPO / "docs" / "json-api.md"
BASE = "http://127.0.0.1:5000"


@dataclass
class Curl:
    """One curl command of the page and the response it shows (None: not shown)."""

    method: str
    path: str
    headers: dict[str, str]
    data: str | None
    shown: str | None
    assigns: str | None = None
    line: str = field(default="", repr=False)


def _parse_curl(text: str) -> tuple[str, str, dict[str, str], str | None]:
    args = shlex.split(text)
    assert args[0] == "curl", text
    method, url, headers, data = "GET", None, {}, None
    i = 1
    while i < len(args):
        arg = args[i]
        if arg == "-s":
            pass
        elif arg == "-X":
            i += 1
            method = args[i]
        elif arg == "-H":
            i += 1
            name, _, value = args[i].partition(":")
            headers[name.strip()] = value.strip()
        elif arg == "-d":
            i += 1
            data = args[i]
            method = "POST" if method == "GET" else method
        elif arg.startswith("http"):
            url = arg
        else:
            raise AssertionError(f"unknown curl argument {arg!r} in {text!r}")
        i += 1
    assert url is not None and url.startswith(BASE), text
    return method, url[len(BASE) :], headers, data


def curls() -> list[Curl]:
    out: list[Curl] = []
    for block in blocks(PAGE):
        if block.lang != "bash":
            continue
        lines = block.body.replace("\\\n", " ").splitlines()
        for line in lines:
            if line.startswith("#"):
                assert out, f"a response comment before any command: {line}"
                shown = line.lstrip("#").strip()
                out[-1].shown = (out[-1].shown + " " if out[-1].shown else "") + shown
                continue
            assigns = None
            m = re.fullmatch(r"(\w+)=\$\((curl .*?) \| python -c .*\)", line.strip())
            if m:
                assigns, line = m[1], m[2]
            method, path, headers, data = _parse_curl(line.strip())
            out.append(Curl(method, path, headers, data, None, assigns, line))
    return out


def _expected(shown: str) -> tuple[dict[str, Any], bool]:
    """The fields a response comment shows, and whether it elides some (``...``)."""
    partial = " ... " in shown
    return json.loads(shown.replace(" ... ", " ")), partial


def test_the_json_api_examples_answer_as_shown(tmp_path: Path) -> None:
    commands = curls()
    assert len(commands) >= 5 and commands[0].assigns == "TOKEN"
    login = json.loads(commands[0].data or "{}")
    app = synced_app(tmp_path, RATELIMIT_ENABLED=False)
    with app.app_context():
        services.create_user(db.session, login["username"], login["password"])
    client = app.test_client()
    variables: dict[str, str] = {}
    compared = 0
    for curl in commands:
        headers = {
            k: v.replace("$TOKEN", variables.get("TOKEN", "")) for k, v in curl.headers.items()
        }
        response = client.open(curl.path, method=curl.method, headers=headers, data=curl.data)
        assert 200 <= response.status_code < 300, (curl.line, response.get_data(as_text=True))
        body = response.get_json()
        if curl.assigns:
            variables[curl.assigns] = body["token"]
        if curl.shown is not None:
            expected, partial = _expected(curl.shown)
            got = {k: body.get(k) for k in expected} if partial else body
            assert got == expected, curl.line
            compared += 1
    assert compared >= 2
