"""A small LTI 1.3 platform (an LMS) for the tests, served on loopback in a thread (no tests here).

Built on jwcrypto and Werkzeug, independently of the tool's code (pylti1p3 and PyJWT): it holds
its own RSA key, signs real id_tokens, and serves what Canvas or Moodle serve to a tool:

- ``GET /auth``: the OIDC authorization endpoint.  Checks the tool's request (client id,
  redirect URI, ``response_type=id_token``, ``response_mode=form_post``, ``scope=openid``,
  ``prompt=none``, state, nonce, the login hint) and answers a page that posts the signed
  id_token and the state to the tool's launch URL.  :attr:`Platform.tamper` may change the
  claims, header or signing key of the next token (rejection tests).
- ``GET /jwks``: the platform's public key set.
- ``POST /token``: OAuth2 client credentials with a JWT client assertion (IMS Security Framework
  4.1), verified against the tool's JWKS fetched from the tool; ``token_down`` makes it answer
  503 (an LMS whose token endpoint is down).
- ``/<context>/lineitems`` (GET with ``resource_id`` / ``resource_link_id`` / ``tag`` filters and
  ``Link: rel="next"`` paging, POST to create), ``/<context>/lineitems/<n>`` (GET),
  ``/<context>/lineitems/<n>/scores`` (POST: AGS scores, checked and stored),
  ``/<context>/memberships`` (NRPS, paged): bearer tokens with the right scope required.
- ``POST /deep_link_return``: the deep-linking response, verified against the tool's JWKS;
  each ``ltiResourceLink`` becomes a link of the course, with the line item it asks for.
- Pages for the browser test: ``/course/<context>/link/<link>?user=<sub>`` frames the tool's
  launch of a link, ``/course/<context>/select?user=<sub>`` frames a deep-linking launch.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import requests
from jwcrypto import jwk, jws
from jwcrypto import jwt as jwcrypto_jwt
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
AGS = "https://purl.imsglobal.org/spec/lti-ags/"
NRPS_CLAIM = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
DL = "https://purl.imsglobal.org/spec/lti-dl/claim/"
SCOPE_LINEITEM = AGS + "scope/lineitem"
SCOPE_LINEITEM_RO = AGS + "scope/lineitem.readonly"
SCOPE_RESULT_RO = AGS + "scope/result.readonly"
SCOPE_SCORE = AGS + "scope/score"
SCOPE_NRPS = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
ALL_SCOPES = [SCOPE_LINEITEM, SCOPE_LINEITEM_RO, SCOPE_RESULT_RO, SCOPE_SCORE, SCOPE_NRPS]
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"


def new_key() -> jwk.JWK:
    """A fresh RSA-2048 key whose ``kid`` is its thumbprint."""
    key = jwk.JWK.generate(kty="RSA", size=2048)
    return jwk.JWK.from_json(json.dumps({**json.loads(key.export()), "kid": key.thumbprint()}))


def sign(claims: dict[str, Any], key: jwk.JWK, header: dict[str, Any] | None = None) -> str:
    """A JWS compact serialization of ``claims`` signed RS256 with ``key`` (header: alg, typ,
    kid, then ``header``'s entries)."""
    head = {"alg": "RS256", "typ": "JWT", "kid": key.get("kid"), **(header or {})}
    if not str(head["alg"]).startswith("RS"):
        # A token claiming another algorithm (HS256, none, ...): what an attacker would send.
        part = lambda data: base64.urlsafe_b64encode(data).rstrip(b"=").decode()  # noqa: E731
        tail = "" if head["alg"] == "none" else part(b"not-a-signature")
        return f"{part(json.dumps(head).encode())}.{part(json.dumps(claims).encode())}.{tail}"
    token = jws.JWS(json.dumps(claims).encode())
    token.add_signature(key, alg=head["alg"], protected=json.dumps(head))
    return token.serialize(compact=True)


@dataclass
class User:
    sub: str
    name: str
    email: str
    roles: list[str]
    given_name: str = ""
    family_name: str = ""


@dataclass
class Tamper:
    """Changes applied to the next id_token only: ``claims`` and ``header`` functions (return
    the new dict), ``key`` the key to sign with (e.g. one the JWKS does not publish)."""

    claims: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    header: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    key: jwk.JWK | None = None


@dataclass
class Platform:
    """The platform's state; :meth:`start` serves it (``url`` is its issuer)."""

    host: str = "127.0.0.1"
    client_id: str = "quizapp-test-client"
    deployment_id: str = "deployment-1"
    key: jwk.JWK = field(default_factory=new_key)
    #: the tool, as registered here: its login, launch and JWKS URLs.
    tool_login: str = ""
    tool_launch: str = ""
    tool_jwks: str = ""
    users: dict[str, User] = field(default_factory=dict)
    #: context id -> {"title", "label", "members": [sub], "links": [link id]}
    contexts: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: link id -> {"context", "title", "custom", "lineitem" (id or None)}
    links: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: line item id (URL) -> the line item as served
    lineitems: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: line item id -> scores posted, in order
    scores: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    lineitem_creates: int = 0
    token_requests: int = 0
    token_down: bool = False
    #: (status, body) answered to every score post while set (e.g. Canvas's 403).
    score_refusal: tuple[int, dict[str, Any]] | None = None
    page_size: int = 2
    granted: list[str] = field(default_factory=lambda: list(ALL_SCOPES))
    tamper: Tamper | None = None
    deep_link_data: str = "platform-opaque-data"
    received_deep_links: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""
    _tokens: dict[str, list[str]] = field(default_factory=dict)
    _jtis: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: Any = None
    _thread: threading.Thread | None = None

    # ------------------------------------------------------------------ serving
    def start(self) -> Platform:
        self._server = make_server("127.0.0.1", 0, self.wsgi, threaded=True)
        self.url = f"http://{self.host}:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(10)

    @property
    def issuer(self) -> str:
        return self.url

    @property
    def auth_url(self) -> str:
        return self.url + "/auth"

    @property
    def token_url(self) -> str:
        return self.url + "/token"

    @property
    def jwks_url(self) -> str:
        return self.url + "/jwks"

    # ------------------------------------------------------------------ set-up helpers
    def add_user(self, sub: str, name: str, roles: list[str], email: str | None = None) -> User:
        given, _, family = name.partition(" ")
        user = User(sub, name, email or f"{sub}@example.edu", roles, given, family)
        self.users[sub] = user
        return user

    def add_context(self, context_id: str, title: str, members: list[str]) -> None:
        self.contexts[context_id] = {
            "title": title,
            "label": title[:8].upper(),
            "members": list(members),
            "links": [],
        }

    def add_link(
        self,
        context_id: str,
        title: str,
        custom: dict[str, str] | None = None,
        lineitem: dict[str, Any] | None = None,
    ) -> str:
        """A resource link of the course (as an instructor adds one by hand, or deep linking
        does); with ``lineitem`` the platform creates its grade column.  Returns its id."""
        link_id = f"link-{len(self.links) + 1}-{secrets.token_hex(3)}"
        item_id = None
        if lineitem is not None:
            item_id = self._create_lineitem(context_id, {**lineitem, "resourceLinkId": link_id})
        self.links[link_id] = {
            "context": context_id,
            "title": title,
            "custom": dict(custom or {}),
            "lineitem": item_id,
        }
        self.contexts[context_id]["links"].append(link_id)
        return link_id

    def _create_lineitem(self, context_id: str, body: dict[str, Any]) -> str:
        with self._lock:
            self.lineitem_creates += 1
            item_id = f"{self.url}/{context_id}/lineitems/{self.lineitem_creates}"
            self.lineitems[item_id] = {**body, "id": item_id, "_context": context_id}
            self.scores[item_id] = []
        return item_id

    def login_params(self, user: str, message: dict[str, Any]) -> dict[str, str]:
        """The OIDC login initiation parameters for ``user`` and a launch ``message``
        (``{"kind": "resource", "link": id}`` or ``{"kind": "deeplink", "context": id}``)."""
        return {
            "iss": self.issuer,
            "login_hint": user,
            "lti_message_hint": json.dumps(message),
            "target_link_uri": self.tool_launch,
            "client_id": self.client_id,
            "lti_deployment_id": self.deployment_id,
        }

    def last_score(self, item_id: str, sub: str) -> dict[str, Any] | None:
        got = [s for s in self.scores.get(item_id, []) if s["userId"] == sub]
        return got[-1] if got else None

    def lineitem_for(self, resource_id: str, context_id: str) -> dict[str, Any] | None:
        for item in self.lineitems.values():
            if item.get("resourceId") == resource_id and item["_context"] == context_id:
                return item
        return None

    # ------------------------------------------------------------------ the id_token
    def claims(self, user: User, message: dict[str, Any], nonce: str) -> dict[str, Any]:
        """The id_token's claims for ``user`` and ``message`` (what Canvas sends, in short)."""
        now = int(time.time())
        body: dict[str, Any] = {
            "iss": self.issuer,
            "aud": self.client_id,
            "azp": self.client_id,
            "sub": user.sub,
            "exp": now + 300,
            "iat": now,
            "nonce": nonce,
            "name": user.name,
            "given_name": user.given_name,
            "family_name": user.family_name,
            "email": user.email,
            CLAIM + "deployment_id": self.deployment_id,
            CLAIM + "version": "1.3.0",
            CLAIM + "roles": list(user.roles),
            CLAIM + "target_link_uri": self.tool_launch,
        }
        if message["kind"] == "deeplink":
            ctx_id = message["context"]
            body[CLAIM + "message_type"] = "LtiDeepLinkingRequest"
            body[DL + "deep_linking_settings"] = {
                "deep_link_return_url": f"{self.url}/deep_link_return?context={ctx_id}",
                "accept_types": ["ltiResourceLink"],
                "accept_presentation_document_targets": ["iframe", "window"],
                "accept_multiple": True,
                "auto_create": True,
                "data": self.deep_link_data,
            }
        else:
            link = self.links[message["link"]]
            ctx_id = link["context"]
            body[CLAIM + "message_type"] = "LtiResourceLinkRequest"
            body[CLAIM + "resource_link"] = {"id": message["link"], "title": link["title"]}
            body[CLAIM + "custom"] = dict(link["custom"])
            ags: dict[str, Any] = {
                "scope": list(self.granted),
                "lineitems": f"{self.url}/{ctx_id}/lineitems",
            }
            if link["lineitem"]:
                ags["lineitem"] = link["lineitem"]
            body[AGS + "claim/endpoint"] = ags
        ctx = self.contexts[ctx_id]
        body[CLAIM + "context"] = {
            "id": ctx_id,
            "title": ctx["title"],
            "label": ctx["label"],
            "type": ["http://purl.imsglobal.org/vocab/lis/v2/course#CourseOffering"],
        }
        body[NRPS_CLAIM] = {
            "context_memberships_url": f"{self.url}/{ctx_id}/memberships",
            "service_versions": ["2.0"],
        }
        return body

    def id_token(
        self, claims: dict[str, Any], key: jwk.JWK | None = None, header: dict | None = None
    ) -> str:
        return sign(claims, key or self.key, header)

    # ------------------------------------------------------------------ WSGI
    def wsgi(self, environ: dict[str, Any], start_response: Callable) -> Any:
        request = Request(environ)
        try:
            response = self._route(request)
        except _HttpError as err:
            response = Response(
                json.dumps(err.body), status=err.status, mimetype="application/json"
            )
        return response(environ, start_response)

    def _route(self, req: Request) -> Response:
        path = req.path.strip("/").split("/")
        if path == ["auth"]:
            return self._auth(req)
        if path == ["jwks"]:
            return _json({"keys": [json.loads(self.key.export_public())]})
        if path == ["token"] and req.method == "POST":
            return self._token(req)
        if path == ["deep_link_return"] and req.method == "POST":
            return self._deep_link_return(req)
        if len(path) == 4 and path[0] == "course" and path[2] == "link":
            return self._frame_page(
                path[1], req.args["user"], {"kind": "resource", "link": path[3]}
            )
        if len(path) == 3 and path[0] == "course" and path[2] == "select":
            return self._frame_page(
                path[1], req.args["user"], {"kind": "deeplink", "context": path[1]}
            )
        if len(path) >= 2 and path[0] in self.contexts:
            ctx = path[0]
            if path[1:] == ["lineitems"]:
                return self._lineitems(req, ctx)
            if len(path) == 3 and path[1] == "lineitems":
                item = self.lineitems.get(f"{self.url}/{ctx}/lineitems/{path[2]}")
                if item is None:
                    raise _HttpError(
                        404, {"errors": [{"message": "The specified resource does not exist."}]}
                    )
                self._check_token(req, [SCOPE_LINEITEM, SCOPE_LINEITEM_RO])
                return _json(_public(item))
            if len(path) == 4 and path[1] == "lineitems" and path[3] == "scores":
                return self._score(req, ctx, f"{self.url}/{ctx}/lineitems/{path[2]}")
            if path[1:] == ["memberships"]:
                return self._memberships(req, ctx)
        raise _HttpError(404, {"error": "not found", "path": req.path})

    # -- OIDC
    def _auth(self, req: Request) -> Response:
        q = req.values
        problems = []
        expected = {
            "scope": "openid",
            "response_type": "id_token",
            "response_mode": "form_post",
            "prompt": "none",
            "client_id": self.client_id,
            "redirect_uri": self.tool_launch,
        }
        for name, value in expected.items():
            if q.get(name) != value:
                problems.append(f"{name}={q.get(name)!r}, expected {value!r}")
        for name in ("state", "nonce", "login_hint", "lti_message_hint"):
            if not q.get(name):
                problems.append(f"no {name}")
        if problems:
            return Response("bad authorization request: " + "; ".join(problems), status=400)
        user = self.users[q["login_hint"]]
        claims = self.claims(user, json.loads(q["lti_message_hint"]), q["nonce"])
        key, header = self.key, None
        tamper, self.tamper = self.tamper, None
        if tamper is not None:
            if tamper.claims:
                claims = tamper.claims(claims)
            if tamper.header:
                header = tamper.header({})
            key = tamper.key or key
        token = self.id_token(claims, key, header)
        return _form_post(self.tool_launch, {"id_token": token, "state": q["state"]})

    # -- OAuth2 client credentials
    def _tool_keys(self) -> jwk.JWKSet:
        resp = requests.get(self.tool_jwks, timeout=10)
        resp.raise_for_status()
        return jwk.JWKSet.from_json(resp.text)

    def _verify_tool_jwt(self, token: str) -> dict[str, Any]:
        try:
            parsed = jwcrypto_jwt.JWT(jwt=token, key=self._tool_keys(), algs=["RS256"])
        except Exception as exc:
            raise _HttpError(
                401, {"error": "invalid_client", "error_description": f"bad signature: {exc}"}
            ) from None
        return json.loads(parsed.claims)

    def _token(self, req: Request) -> Response:
        with self._lock:
            self.token_requests += 1
        if self.token_down:
            return Response("Service Unavailable", status=503)
        form = req.form
        if form.get("grant_type") != "client_credentials":
            raise _HttpError(400, {"error": "unsupported_grant_type"})
        if (
            form.get("client_assertion_type")
            != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
        ):
            raise _HttpError(
                400, {"error": "invalid_request", "error_description": "client_assertion_type"}
            )
        claims = self._verify_tool_jwt(form.get("client_assertion", ""))
        now = time.time()
        if claims.get("iss") != self.client_id or claims.get("sub") != self.client_id:
            raise _HttpError(
                401, {"error": "invalid_client", "error_description": "unknown client"}
            )
        if claims.get("aud") not in (self.token_url, [self.token_url]):
            raise _HttpError(
                401, {"error": "invalid_client", "error_description": "wrong audience"}
            )
        if not claims.get("exp") or claims["exp"] < now or claims.get("iat", now) > now + 60:
            raise _HttpError(
                401, {"error": "invalid_client", "error_description": "expired assertion"}
            )
        with self._lock:
            if claims.get("jti") in self._jtis:
                raise _HttpError(
                    401, {"error": "invalid_client", "error_description": "jti reused"}
                )
            self._jtis.add(claims.get("jti"))
        asked = form.get("scope", "").split()
        refused = [s for s in asked if s not in self.granted]
        if refused:
            raise _HttpError(
                400,
                {
                    "error": "invalid_scope",
                    "error_description": f"scope not granted: {' '.join(refused)}",
                },
            )
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._tokens[token] = asked
        return _json(
            {
                "access_token": token,
                "token_type": "Bearer",
                "expires_in": 3600,
                "scope": " ".join(asked),
            }
        )

    def _check_token(self, req: Request, scopes: list[str]) -> None:
        auth = req.headers.get("Authorization", "")
        if not auth.startswith("Bearer "):
            raise _HttpError(401, {"errors": [{"message": "Invalid access token format"}]})
        granted = self._tokens.get(auth[7:])
        if granted is None:
            raise _HttpError(401, {"errors": [{"message": "Invalid access token"}]})
        if not set(scopes) & set(granted):
            raise _HttpError(401, {"errors": [{"message": "Insufficient scopes on access token"}]})

    # -- AGS
    def _lineitems(self, req: Request, ctx: str) -> Response:
        if req.method == "POST":
            self._check_token(req, [SCOPE_LINEITEM])
            if req.mimetype != "application/vnd.ims.lis.v2.lineitem+json":
                raise _HttpError(415, {"errors": [{"message": f"content type {req.mimetype}"}]})
            body = json.loads(req.get_data(as_text=True))
            if not isinstance(body.get("scoreMaximum"), int | float) or body["scoreMaximum"] <= 0:
                raise _HttpError(400, {"errors": [{"message": "scoreMaximum must be positive"}]})
            item_id = self._create_lineitem(ctx, body)
            return _json(
                _public(self.lineitems[item_id]),
                status=201,
                mimetype="application/vnd.ims.lis.v2.lineitem+json",
            )
        self._check_token(req, [SCOPE_LINEITEM, SCOPE_LINEITEM_RO])
        items = [_public(i) for i in self.lineitems.values() if i["_context"] == ctx]
        for param, key in (
            ("resource_id", "resourceId"),
            ("resource_link_id", "resourceLinkId"),
            ("tag", "tag"),
        ):
            if req.args.get(param):
                items = [i for i in items if i.get(key) == req.args[param]]
        return self._page(
            req,
            items,
            f"{self.url}/{ctx}/lineitems",
            "application/vnd.ims.lis.v2.lineitemcontainer+json",
        )

    def _page(
        self, req: Request, items: list[Any], base: str, mimetype: str, wrap: Callable | None = None
    ) -> Response:
        offset = int(req.args.get("offset", 0))
        page = items[offset : offset + self.page_size]
        resp = _json(wrap(page) if wrap else page, mimetype=mimetype)
        if offset + self.page_size < len(items):
            query = {k: v for k, v in req.args.items() if k != "offset"}
            query["offset"] = str(offset + self.page_size)
            resp.headers["Link"] = f'<{base}?{urlencode(query)}>; rel="next"'
        return resp

    def _score(self, req: Request, ctx: str, item_id: str) -> Response:
        if item_id not in self.lineitems:
            raise _HttpError(
                404, {"errors": [{"message": "The specified resource does not exist."}]}
            )
        self._check_token(req, [SCOPE_SCORE])
        if req.mimetype != "application/vnd.ims.lis.v1.score+json":
            raise _HttpError(415, {"errors": [{"message": f"content type {req.mimetype}"}]})
        if self.score_refusal is not None:
            status, body = self.score_refusal
            raise _HttpError(status, body)
        score = json.loads(req.get_data(as_text=True))
        for name in ("userId", "activityProgress", "gradingProgress", "timestamp"):
            if name not in score:
                raise _HttpError(400, {"errors": [{"message": f"missing {name}"}]})
        if score["userId"] not in self.contexts[ctx]["members"]:
            raise _HttpError(
                422, {"errors": [{"message": "User not found in course or is not a student"}]}
            )
        given, maximum = score.get("scoreGiven"), score.get("scoreMaximum")
        if given is not None and (
            not isinstance(maximum, int | float) or maximum <= 0 or given < 0
        ):
            raise _HttpError(400, {"errors": [{"message": "scoreMaximum must be positive"}]})
        with self._lock:
            self.scores[item_id].append(score)
        return Response(status=204)

    # -- NRPS
    def _memberships(self, req: Request, ctx: str) -> Response:
        self._check_token(req, [SCOPE_NRPS])
        info = self.contexts[ctx]
        members = []
        for sub in info["members"]:
            u = self.users[sub]
            members.append(
                {
                    "status": "Active",
                    "name": u.name,
                    "given_name": u.given_name,
                    "family_name": u.family_name,
                    "email": u.email,
                    "user_id": u.sub,
                    "roles": u.roles,
                }
            )
        for sub in info.get("inactive", []):
            u = self.users[sub]
            members.append(
                {"status": "Inactive", "name": u.name, "user_id": u.sub, "roles": u.roles}
            )
        url = f"{self.url}/{ctx}/memberships"
        return self._page(
            req,
            members,
            url,
            "application/vnd.ims.lti-nrps.v2.membershipcontainer+json",
            wrap=lambda page: {
                "id": url,
                "context": {"id": ctx, "title": info["title"]},
                "members": page,
            },
        )

    # -- deep linking
    def _deep_link_return(self, req: Request) -> Response:
        ctx = req.args["context"]
        claims = self._verify_tool_jwt(req.form.get("JWT", ""))
        problems = []
        if claims.get("iss") != self.client_id:
            problems.append(f"iss {claims.get('iss')!r}")
        aud = claims.get("aud")
        if self.issuer not in (aud if isinstance(aud, list) else [aud]):
            problems.append(f"aud {aud!r}")
        if claims.get(CLAIM + "message_type") != "LtiDeepLinkingResponse":
            problems.append("message type")
        if claims.get(CLAIM + "deployment_id") != self.deployment_id:
            problems.append("deployment")
        if claims.get(DL + "data") != self.deep_link_data:
            problems.append("data not echoed")
        if not claims.get("nonce") or claims.get("exp", 0) < time.time():
            problems.append("nonce/exp")
        if problems:
            return Response("bad deep linking response: " + ", ".join(problems), status=400)
        added = []
        for item in claims.get(DL + "content_items", []):
            if item.get("type") != "ltiResourceLink":
                continue
            link_id = self.add_link(ctx, item["title"], item.get("custom"), item.get("lineItem"))
            added.append(link_id)
        self.received_deep_links.append(claims)
        rows = "".join(
            f'<li><a class="link" data-link="{escape(i)}" href="/course/{escape(ctx)}/link/{escape(i)}?user=USER">'
            f"{escape(self.links[i]['title'])}</a></li>"
            for i in added
        )
        return Response(
            f"<!doctype html><html><body><h1 id='added'>Added {len(added)} items</h1><ul>{rows}</ul></body></html>",
            mimetype="text/html",
        )

    # -- pages framing the tool
    def _frame_page(self, ctx: str, user: str, message: dict[str, Any]) -> Response:
        src = self.tool_login + "?" + urlencode(self.login_params(user, message))
        return Response(
            "<!doctype html><html><head><title>Course</title></head><body>"
            f"<h1>{escape(self.contexts[ctx]['title'])}</h1>"
            f'<iframe id="tool" name="tool" src="{escape(src)}" width="1000" height="800"></iframe>'
            "</body></html>",
            mimetype="text/html",
        )


class _HttpError(Exception):
    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.body = body


def _json(body: Any, status: int = 200, mimetype: str = "application/json") -> Response:
    return Response(json.dumps(body), status=status, mimetype=mimetype)


def _public(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if not k.startswith("_")}


def _form_post(action: str, fields: dict[str, str]) -> Response:
    inputs = "".join(
        f'<input type="hidden" name="{escape(k)}" value="{escape(v)}">' for k, v in fields.items()
    )
    return Response(
        "<!doctype html><html><body>"
        f'<form id="post" method="post" action="{escape(action)}">{inputs}'
        '<button type="submit">Continue</button></form>'
        "<script>document.getElementById('post').submit();</script></body></html>",
        mimetype="text/html",
    )


def parse_form_post(html: str, form_id: str | None = None) -> tuple[str, dict[str, str]]:
    """(action, hidden fields) of the form ``form_id`` of ``html``, else of the first form that
    has hidden fields other than a CSRF token (the platform's and the tool's auto-posting
    pages; the tool's pages also have the sign-out form)."""
    import re
    from html import unescape

    for m in re.finditer(r"<form([^>]*)>(.*?)</form>", html, re.S):
        attrs, inner = m.group(1), m.group(2)
        if form_id is not None and f'id="{form_id}"' not in attrs:
            continue
        fields = {
            unescape(f.group(1)): unescape(f.group(2))
            for f in re.finditer(r'<input type="hidden" name="([^"]*)" value="([^"]*)"', inner)
        }
        if form_id is None and set(fields) <= {"csrf_token"}:
            continue
        action = re.search(r'action="([^"]*)"', attrs)
        return unescape(action.group(1) if action else ""), fields
    raise AssertionError(f"no such form ({form_id or 'with hidden fields'}) in the page")


def query_of(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def fresh_id() -> str:
    return uuid.uuid4().hex
