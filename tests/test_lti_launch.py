"""LTI 1.3 login and launch against the test platform: what a valid launch does (account,
role, framing, cookies), and every refusal: wrong signature, unknown key, unknown issuer or
client, expired token, replayed or forged nonce, wrong deployment, missing claims, a launch
without the browser's state cookie (cookies blocked in the LMS's frame)."""

from __future__ import annotations

import html
import time
from typing import Any

import pytest
import requests
from jwcrypto import jwk
from lti_platform import (
    CLAIM,
    INSTRUCTOR,
    LEARNER,
    Platform,
    Tamper,
    new_key,
    parse_form_post,
    query_of,
)
from lti_support import (
    COURSE,
    QUIZ,
    TWO,
    Tool,
    platform_fixture,  # noqa: F401  (fixture)
    quiz_points,
    tool_fixture,  # noqa: F401  (fixture)
    username_of,
)
from sqlalchemy import func, select

from quizapp.lti.models import LtiLaunchData, LtiRegistration, LtiUser
from quizapp.models import User


def quiz_link(platform: Platform) -> str:
    return platform.add_link(
        COURSE,
        "Linear systems",
        {"quizapp_quiz": QUIZ},
        lineitem={
            "scoreMaximum": quiz_points(QUIZ),
            "label": "Linear",
            "resourceId": f"quiz:{QUIZ}",
        },
    )


def resource(link: str) -> dict[str, Any]:
    return {"kind": "resource", "link": link}


def refused(resp: requests.Response, status: int, *words: str) -> str:
    """The refusal page: its status and the words of its message."""
    text = html.unescape(resp.text)
    assert resp.status_code == status, (resp.status_code, text[:1500])
    assert 'id="lti-refused"' in text, text[:1500]
    for word in words:
        assert word in text, (word, text[:1500])
    return text


def accounts(tool: Tool) -> int:
    return tool.query(lambda s: s.scalar(select(func.count()).select_from(LtiUser)))


# --------------------------------------------------------------------------------------------
# A valid launch


def test_launch_signs_in_a_student_and_lets_the_lms_frame_the_session(
    tool: Tool, platform: Platform
) -> None:
    link = quiz_link(platform)
    browser = requests.Session()
    resp = tool.launch(browser, "student-1", resource(link))
    assert resp.status_code == 302, resp.text[:800]
    assert resp.headers["Location"] == f"/lti/quiz/{QUIZ}"
    page = browser.get(tool.url + f"/lti/quiz/{QUIZ}")
    assert page.status_code == 200
    assert "Signed in as <strong><bdi>Ana Álvarez</bdi></strong>" in page.text
    # Framed by the LMS: the registration's origin may frame this session's pages.
    csp = page.headers["Content-Security-Policy"]
    assert f"frame-ancestors 'self' {platform.url}" in csp
    assert "X-Frame-Options" not in page.headers

    # The account: from sub, name, email and the Learner role.
    def account(s: Any) -> tuple:
        return s.execute(
            select(User.username, User.display_name, User.email, User.role)
            .join(LtiUser, LtiUser.user_id == User.id)
            .where(LtiUser.sub == "student-1")
        ).one()

    assert tool.query(account) == ("student-1", "Ana Álvarez", "student-1@example.edu", "student")
    # A session that did not come from the LMS is not framable.
    other = requests.get(tool.url + "/login")
    assert "frame-ancestors 'none'" in other.headers["Content-Security-Policy"]
    assert other.headers["X-Frame-Options"] == "DENY"


def test_launch_posted_by_the_lms_page_allows_that_origin_only(
    tool: Tool, platform: Platform
) -> None:
    link = quiz_link(platform)
    browser = requests.Session()
    action, fields = tool.id_token_post(browser, "student-1", resource(link))
    resp = browser.post(
        action, data=fields, headers={"Origin": "https://school.lms.example"}, allow_redirects=False
    )
    assert resp.status_code == 302
    page = browser.get(tool.url + resp.headers["Location"])
    assert (
        "frame-ancestors 'self' https://school.lms.example;"
        in page.headers["Content-Security-Policy"] + ";"
    )


def test_cookie_check_page_comes_first_and_may_be_framed(tool: Tool, platform: Platform) -> None:
    params = platform.login_params("student-1", resource(quiz_link(platform)))
    resp = requests.get(tool.url + "/lti/login", params=params)
    assert resp.status_code == 200
    assert 'id="lti-check"' in resp.text and "lti.js" in resp.text
    assert "frame-ancestors *" in resp.headers["Content-Security-Policy"]
    assert "X-Frame-Options" not in resp.headers
    go = html.unescape(resp.text.split('data-continue="', 1)[1].split('"', 1)[0])
    assert query_of(go) == {**params, "checked": "1"}
    # The blocked-cookies message and its new-window link are on the page for the script.
    assert "Your browser blocks cookies for quizapp here" in resp.text
    assert 'target="_blank"' in resp.text


def test_login_redirects_to_the_platform_with_state_cookie_and_nonce(
    tool: Tool, platform: Platform
) -> None:
    browser = requests.Session()
    resp = tool.login(browser, "student-1", resource(quiz_link(platform)))
    assert resp.status_code == 302
    location = resp.headers["Location"]
    assert location.startswith(platform.auth_url + "?")
    q = query_of(location)
    assert q["client_id"] == platform.client_id and q["redirect_uri"] == tool.url + "/lti/launch"
    assert q["login_hint"] == "student-1" and q["response_mode"] == "form_post"
    cookie = resp.headers["Set-Cookie"]
    assert cookie.startswith(f"lti1p3-{q['state']}={q['state']};") and "HttpOnly" in cookie
    nonce_key = f"lti1p3-nonce-{q['nonce']}"
    assert tool.query(lambda s: s.get(LtiLaunchData, nonce_key)) is not None


@pytest.mark.parametrize(
    ("change", "status", "words"),
    [
        (
            {"iss": "https://unknown.lms.example"},
            403,
            ["https://unknown.lms.example is not registered", "quizapp lti register"],
        ),
        (
            {"client_id": "someone-else"},
            403,
            ["client id someone-else, which is not registered", "quizapp-test-client"],
        ),
        ({"login_hint": ""}, 400, ["did not send 'login_hint'"]),
        ({"iss": ""}, 400, ["did not send its issuer"]),
    ],
)
def test_login_refusals(
    tool: Tool, platform: Platform, change: dict, status: int, words: list[str]
) -> None:
    params = {**platform.login_params("student-1", resource(quiz_link(platform))), **change}
    for checked in ("", "1"):
        resp = requests.get(
            tool.url + "/lti/login", params={**params, "checked": checked}, allow_redirects=False
        )
        refused(resp, status, *words)


# --------------------------------------------------------------------------------------------
# Refused launches


def _tampered(tool: Tool, platform: Platform, tamper: Tamper) -> requests.Response:
    link = quiz_link(platform)
    return tool.launch(requests.Session(), "student-1", resource(link), tamper)


def test_wrong_signature_is_refused(tool: Tool, platform: Platform) -> None:
    # Signed by another key under the platform's own key id: the signature cannot verify.
    forged = jwk.JWK(**{**new_key().export(as_dict=True), "kid": platform.key.get("kid")})
    resp = _tampered(tool, platform, Tamper(key=forged))
    refused(resp, 401, "signature does not verify", platform.jwks_url)
    assert accounts(tool) == 0


def test_key_not_in_the_platforms_key_set_is_refused(tool: Tool, platform: Platform) -> None:
    resp = _tampered(tool, platform, Tamper(key=new_key()))
    refused(resp, 401, "does not list", platform.jwks_url)
    assert accounts(tool) == 0


@pytest.mark.parametrize("alg", ["HS256", "none", "ES256"])
def test_other_algorithms_are_refused(tool: Tool, platform: Platform, alg: str) -> None:
    resp = _tampered(tool, platform, Tamper(header=lambda h: {**h, "alg": alg}))
    refused(resp, 401, f"algorithm '{alg}'", "RS256")


def test_unknown_issuer_in_the_token_is_refused(tool: Tool, platform: Platform) -> None:
    resp = _tampered(tool, platform, Tamper(claims=lambda c: {**c, "iss": "https://evil.example"}))
    refused(resp, 403, "https://evil.example is not registered")
    assert accounts(tool) == 0


def test_unknown_client_in_the_token_is_refused(tool: Tool, platform: Platform) -> None:
    def other(c: dict) -> dict:
        c = {**c, "aud": "another-tool"}
        c.pop("azp")
        return c

    resp = _tampered(tool, platform, Tamper(claims=other))
    refused(resp, 403, "client id another-tool, which is not registered", "quizapp-test-client")


def test_azp_must_be_one_of_the_audiences(tool: Tool, platform: Platform) -> None:
    resp = _tampered(tool, platform, Tamper(claims=lambda c: {**c, "azp": "another-tool"}))
    refused(resp, 401, "'azp' (another-tool) is not one of its audiences")


def test_several_audiences_need_azp(tool: Tool, platform: Platform) -> None:
    def two(c: dict) -> dict:
        c = {**c, "aud": [platform.client_id, "another-tool"]}
        c.pop("azp")
        return c

    refused(_tampered(tool, platform, Tamper(claims=two)), 401, "several audiences", "no 'azp'")
    # With azp naming the tool's client id, the same audiences are accepted.
    ok = _tampered(tool, platform, Tamper(claims=lambda c: {**c, "aud": [platform.client_id, "x"]}))
    assert ok.status_code == 302, ok.text[:800]


def test_expired_token_is_refused(tool: Tool, platform: Platform) -> None:
    now = int(time.time())
    resp = _tampered(
        tool, platform, Tamper(claims=lambda c: {**c, "iat": now - 900, "exp": now - 300})
    )
    refused(resp, 401, "The id_token expired", "start again from the LMS")
    assert accounts(tool) == 0


def test_token_issued_in_the_future_is_refused(tool: Tool, platform: Platform) -> None:
    now = int(time.time())
    resp = _tampered(
        tool, platform, Tamper(claims=lambda c: {**c, "iat": now + 900, "exp": now + 1200})
    )
    refused(resp, 401, "issued in the future", "clock")


def test_replayed_nonce_is_refused(tool: Tool, platform: Platform) -> None:
    link = quiz_link(platform)
    browser = requests.Session()
    action, fields = tool.id_token_post(browser, "student-1", resource(link))
    first = browser.post(action, data=fields, allow_redirects=False)
    assert first.status_code == 302
    again = browser.post(action, data=fields, allow_redirects=False)
    refused(again, 401, "already used")


def test_nonce_the_tool_never_issued_is_refused(tool: Tool, platform: Platform) -> None:
    resp = _tampered(tool, platform, Tamper(claims=lambda c: {**c, "nonce": "made-up-nonce"}))
    refused(resp, 401, "its nonce is unknown")
    assert accounts(tool) == 0


def test_wrong_deployment_is_refused(tool: Tool, platform: Platform) -> None:
    resp = _tampered(
        tool, platform, Tamper(claims=lambda c: {**c, CLAIM + "deployment_id": "deployment-9"})
    )
    refused(resp, 403, "Deployment deployment-9", "--deployment-id deployment-9")
    assert accounts(tool) == 0


@pytest.mark.parametrize(
    ("claim", "status"),
    [
        ("sub", 400),
        (CLAIM + "deployment_id", 400),
        (CLAIM + "version", 400),
        (CLAIM + "roles", 400),
        (CLAIM + "resource_link", 400),
        (CLAIM + "message_type", 400),
        ("nonce", 400),
        ("exp", 400),
        ("iat", 400),
        ("aud", 400),
        ("iss", 400),
    ],
)
def test_missing_claims_are_named(tool: Tool, platform: Platform, claim: str, status: int) -> None:
    def drop(c: dict) -> dict:
        c = dict(c)
        c.pop(claim)
        return c

    text = refused(_tampered(tool, platform, Tamper(claims=drop)), status)
    assert f"'{claim}'" in text, text[:1500]
    assert accounts(tool) == 0


def test_invalid_version_claim_is_named(tool: Tool, platform: Platform) -> None:
    resp = _tampered(tool, platform, Tamper(claims=lambda c: {**c, CLAIM + "version": "1.1"}))
    refused(resp, 400, f"'{CLAIM}version' claim is not valid", '"1.1"')


def test_launch_without_id_token_is_refused(tool: Tool) -> None:
    refused(requests.post(tool.url + "/lti/launch", data={}), 400, "no id_token")


# --------------------------------------------------------------------------------------------
# Cookies blocked: the re-post, then the new window


def test_missing_state_cookie_reposts_then_offers_a_new_window(
    tool: Tool, platform: Platform
) -> None:
    link = quiz_link(platform)
    browser = requests.Session()
    action, fields = tool.id_token_post(browser, "student-1", resource(link))
    # The cross-site POST arrives without the state cookie (SameSite=Lax, or a frame whose
    # cookies are blocked): the tool posts it once more to itself.
    repost = requests.post(action, data=fields, headers={"Origin": platform.url})
    assert repost.status_code == 200
    assert (
        'id="lti-relaunch"' in repost.text
        and "frame-ancestors *" in repost.headers["Content-Security-Policy"]
    )
    action2, fields2 = parse_form_post(repost.text, "lti-relaunch")
    assert action2 == "/lti/launch"
    assert fields2["id_token"] == fields["id_token"] and fields2["quizapp_relaunch"] == "1"
    # Still no cookie on the tool's own re-post: cookies are blocked here.
    blocked = requests.post(tool.url + action2, data=fields2)
    assert blocked.status_code == 401
    assert "Your browser blocks cookies for quizapp here" in blocked.text
    new_window = html.unescape(
        blocked.text.split('id="lti-new-window" class="button" href="', 1)[1].split('"', 1)[0]
    )
    assert query_of(new_window) == {
        **platform.login_params("student-1", resource(link)),
        "checked": "1",
    }
    assert accounts(tool) == 0
    # The new window (a top-level browsing context, with cookies) signs the student in.
    window = requests.Session()
    start = window.get(tool.url + new_window, allow_redirects=False)
    assert start.status_code == 302
    form_action, form = parse_form_post(window.get(start.headers["Location"]).text)
    done = window.post(form_action, data=form, allow_redirects=False)
    assert done.status_code == 302 and done.headers["Location"] == f"/lti/quiz/{QUIZ}"


def test_repost_with_the_cookie_completes_the_launch(tool: Tool, platform: Platform) -> None:
    """A top-level window drops the Lax state cookie on the LMS's cross-site POST but sends it
    on the tool's same-site re-post: the launch completes, framed by the LMS page that posted."""
    link = quiz_link(platform)
    browser = requests.Session()
    action, fields = tool.id_token_post(browser, "student-1", resource(link))
    repost = requests.post(action, data=fields, headers={"Origin": "https://school.lms.example"})
    action2, fields2 = parse_form_post(repost.text, "lti-relaunch")
    done = browser.post(tool.url + action2, data=fields2, allow_redirects=False)
    assert done.status_code == 302, done.text[:800]
    page = browser.get(tool.url + done.headers["Location"])
    assert (
        "frame-ancestors 'self' https://school.lms.example"
        in page.headers["Content-Security-Policy"]
    )
    # A re-post whose framing origin was altered is not trusted (signed by the tool).
    browser2 = requests.Session()
    action, fields = tool.id_token_post(browser2, "student-2", resource(link))
    repost = requests.post(action, data=fields, headers={"Origin": "https://school.lms.example"})
    _, fields3 = parse_form_post(repost.text, "lti-relaunch")
    fields3["quizapp_frame"] = "https://evil.example"
    done = browser2.post(tool.url + "/lti/launch", data=fields3, allow_redirects=False)
    assert done.status_code == 302
    page = browser2.get(tool.url + done.headers["Location"])
    assert "evil.example" not in page.headers["Content-Security-Policy"]


# --------------------------------------------------------------------------------------------
# Roles, links, keys


def test_roles_map_to_accounts_and_instructors_are_not_demoted(
    tool: Tool, platform: Platform
) -> None:
    link = quiz_link(platform)
    assert tool.launch(requests.Session(), "teacher-1", resource(link)).status_code == 302
    role = lambda sub: tool.query(  # noqa: E731
        lambda s: s.scalar(
            select(User.role).join(LtiUser, LtiUser.user_id == User.id).where(LtiUser.sub == sub)
        )
    )
    assert role("teacher-1") == "instructor"
    platform.users["teacher-1"].roles = [LEARNER]
    assert tool.launch(requests.Session(), "teacher-1", resource(link)).status_code == 302
    assert role("teacher-1") == "instructor"
    assert tool.launch(requests.Session(), "student-2", resource(link)).status_code == 302
    assert role("student-2") == "student"
    platform.users["student-2"].roles = [INSTRUCTOR]
    assert tool.launch(requests.Session(), "student-2", resource(link)).status_code == 302
    assert role("student-2") == "instructor"
    # Platform users have no password: no password signs them in.
    from quizapp import services

    name = username_of(tool, "student-2")
    for password in ("!lti", "", "correct horse battery"):
        assert tool.query(lambda s, pw=password: services.authenticate(s, name, pw)) is None


def test_usernames_are_unique_and_readable(tool: Tool, platform: Platform) -> None:
    from quizapp import services

    with tool.app.app_context():
        from quizapp.models import db

        services.create_user(db.session, "student-1", "a password here")
    link = quiz_link(platform)
    assert tool.launch(requests.Session(), "student-1", resource(link)).status_code == 302
    assert username_of(tool, "student-1") == "student-1-2"


def test_student_cannot_choose_content(tool: Tool, platform: Platform) -> None:
    resp = tool.launch(requests.Session(), "student-1", {"kind": "deeplink", "context": COURSE})
    refused(resp, 403, "Only the course's instructors choose content")


def test_link_tied_to_nothing_says_so(tool: Tool, platform: Platform) -> None:
    link = platform.add_link(COURSE, "Loose link")
    browser = requests.Session()
    resp = tool.launch(browser, "student-1", resource(link))
    assert resp.status_code == 200
    assert "not tied to a quiz or exercise" in html.unescape(resp.text)


def test_exercise_link_opens_the_exercise(tool: Tool, platform: Platform) -> None:
    link = platform.add_link(COURSE, "Two by two", {"quizapp_exercise": TWO})
    resp = tool.launch(requests.Session(), "student-1", resource(link))
    assert resp.status_code == 302 and resp.headers["Location"] == "/exercises/" + TWO


def test_platform_key_rotation_is_followed(tool: Tool, platform: Platform) -> None:
    link = quiz_link(platform)
    assert tool.launch(requests.Session(), "student-1", resource(link)).status_code == 302
    cached = tool.query(lambda s: s.scalars(select(LtiRegistration)).one().platform_jwks)
    assert cached["keys"][0]["kid"] == platform.key.get("kid")
    platform.key = new_key()  # the platform rotates: its JWKS now lists the new key only
    resp = tool.launch(requests.Session(), "student-2", resource(link))
    assert resp.status_code == 302, resp.text[:800]
    cached = tool.query(lambda s: s.scalars(select(LtiRegistration)).one().platform_jwks)
    assert cached["keys"][0]["kid"] == platform.key.get("kid")


def test_link_to_a_quiz_that_does_not_exist_says_so(tool: Tool, platform: Platform) -> None:
    link = platform.add_link(COURSE, "Old link", {"quizapp_quiz": "no-such-quiz"})
    resp = tool.launch(requests.Session(), "student-1", resource(link))
    assert resp.status_code == 200, resp.text[:800]
    assert "the quiz 'no-such-quiz', which does not exist here" in html.unescape(resp.text)


def test_deactivated_account_is_not_signed_in(tool: Tool, platform: Platform) -> None:
    from sqlalchemy import update

    link = quiz_link(platform)
    assert tool.launch(requests.Session(), "student-1", resource(link)).status_code == 302

    def deactivate(s: Any) -> None:
        s.execute(update(User).where(User.username == "student-1").values(active=False))
        s.commit()

    tool.query(deactivate)
    resp = tool.launch(requests.Session(), "student-1", resource(link))
    refused(resp, 403, "account is deactivated")


def test_worker_settings_are_checked(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_web_support import make_app

    from quizapp.config import ConfigError

    monkeypatch.setenv("QUIZAPP_LTI_POLL", "0")
    with pytest.raises(ConfigError, match="QUIZAPP_LTI_POLL must be the seconds"):
        make_app(tmp_path)
    monkeypatch.setenv("QUIZAPP_LTI_POLL", "5")
    monkeypatch.setenv("QUIZAPP_LTI_WORKER", "maybe")
    with pytest.raises(ConfigError, match="QUIZAPP_LTI_WORKER must be"):
        make_app(tmp_path)
    monkeypatch.setenv("QUIZAPP_LTI_WORKER", "0")
    state = make_app(tmp_path).extensions["quizapp_lti"]
    assert state.worker_enabled is False and state.poll == 5.0


def test_login_initiation_may_be_a_post(tool: Tool, platform: Platform) -> None:
    """LTI 1.3 section 4.1: the platform may initiate the login with a form POST (Canvas does)."""
    params = platform.login_params("student-1", resource(quiz_link(platform)))
    check = requests.post(tool.url + "/lti/login", data=params)
    assert check.status_code == 200 and 'id="lti-check"' in check.text
    browser = requests.Session()
    resp = browser.post(
        tool.url + "/lti/login", data={**params, "checked": "1"}, allow_redirects=False
    )
    assert resp.status_code == 302 and resp.headers["Location"].startswith(platform.auth_url)
    action, fields = parse_form_post(browser.get(resp.headers["Location"]).text)
    assert browser.post(action, data=fields, allow_redirects=False).status_code == 302
