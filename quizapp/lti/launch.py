"""Launch (LTI 1.3 core, IMS Security Framework 5.1), on pylti1p3.

Framework-free: the web layer passes the request's parameters, cookies and scheme as plain
values (:class:`quizapp.lti.adapters.PlainRequest`) and applies the cookies and redirect it gets back.

**Launch** (:func:`validate_launch`, ``/lti/launch``): the platform posts an ``id_token`` (a JWT)
and the ``state``.  Checked, in this order, each failure a
:class:`~quizapp.lti.claims.LaunchRefused` saying what is wrong and what to do:

1. ``state`` equals the state cookie of this browser;
2. the token is a JWT whose ``iss`` is registered, whose ``aud`` contains the registration's
   client id, and whose ``azp`` (required when ``aud`` has several values) is that client id;
3. its signature verifies with the platform's key (its JWKS, cached an hour in the database and
   fetched again when a key id is unknown), with an RS256/384/512 algorithm, and ``exp`` / ``iat``
   hold (60 s of clock skew tolerated);
4. its ``nonce`` was issued by this tool and is used now, once: the row is deleted, so a replayed
   token fails on every host;
5. its ``deployment_id`` is registered for the registration;
6. the claims of its message type are there (version, ``sub``, roles, the resource link or the
   deep-linking settings), then pylti1p3's own message checks.

A valid launch signs the user in (account from ``sub``, name, email and roles: see
``quizapp.lti.accounts``) and records the course, membership, link and line item it names.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jwt
import requests
from jwcrypto.jwk import JWK
from pylti1p3.exception import LtiException
from pylti1p3.message_launch import MessageLaunch
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from quizapp import services
from quizapp.lti import accounts
from quizapp.lti.adapters import CookieJar, DatabaseStorage, PlainRequest, Sessions
from quizapp.lti.claims import (
    AGS_ENDPOINT,
    ALGORITHMS,
    CONTEXT,
    CUSTOM,
    CUSTOM_EXERCISE,
    CUSTOM_QUIZ,
    DEEP_LINK_LAUNCH,
    DEEP_LINKING_SETTINGS,
    DEPLOYMENT_ID,
    JWKS_LIFETIME,
    LEEWAY,
    MESSAGE_TYPE,
    NONCE_LIFETIME,
    NRPS,
    RESOURCE_LAUNCH,
    RESOURCE_LINK,
    ROLES,
    TARGET_LINK_URI,
    VERSION,
    LaunchRefused,
)
from quizapp.lti.grades import queue_user
from quizapp.lti.keys import ToolKey
from quizapp.lti.models import (
    LTI_ID_MAX,
    LtiContext,
    LtiLineItem,
    LtiLink,
    LtiRegistration,
)
from quizapp.lti.registry import DatabaseToolConf, find_registration, list_registrations
from quizapp.lti.scores import resource_id
from quizapp.models import Exercise, Quiz, utcnow


def _claims_of(id_token: str) -> dict[str, Any]:
    """The unverified body of a JWT (to name the issuer in messages); {} if unreadable."""
    try:
        return dict(jwt.decode(id_token, options={"verify_signature": False}))
    except Exception:
        return {}


class _Launch(MessageLaunch):
    """pylti1p3's message launch with the checks in the order of the module docstring and
    messages that say what to do."""

    def __init__(
        self,
        request: PlainRequest,
        conf: DatabaseToolConf,
        sessions: Sessions,
        cookies: CookieJar,
        http: requests.Session,
        db: Session,
    ) -> None:
        super().__init__(request, conf, sessions, cookies, requests_session=http)
        self._db = db
        self._row: LtiRegistration | None = None
        self._client_id: str | None = None

    def _get_request_param(self, key: str) -> Any:
        return self._request.get_param(key)

    # -- 1. state ------------------------------------------------------------------------
    def validate_state(self) -> _Launch:
        state = self._get_request_param("state")
        if not state:
            raise LaunchRefused("The launch has no 'state'; start again from the LMS.")
        cookie = self._cookie_service.get_cookie(state)
        if cookie != state:
            raise LaunchRefused(
                "This launch does not belong to this browser's sign-in (its state cookie is "
                "missing or different): start again from the LMS.",
                status=401,
            )
        return self

    # -- 2. registration: iss, aud, azp ---------------------------------------------------
    def validate_jwt_format(self) -> _Launch:
        try:
            super().validate_jwt_format()
        except LtiException:
            raise LaunchRefused(
                "The launch's id_token is not a JSON Web Token; start again from the LMS."
            ) from None
        if not isinstance(self._jwt.get("body"), dict):
            raise LaunchRefused("The launch's id_token has no claims.")
        return self

    def validate_registration(self) -> _Launch:
        body: Mapping[str, Any] = self._jwt.get("body", {})
        iss = body.get("iss")
        if not isinstance(iss, str) or not iss:
            raise LaunchRefused("The id_token has no 'iss' claim (the LMS's issuer).")
        aud = body.get("aud")
        auds = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
        if not auds or not all(isinstance(a, str) for a in auds):
            raise LaunchRefused("The id_token has no 'aud' claim (the tool's client id).")
        azp = body.get("azp")
        if azp is not None and azp not in auds:
            raise LaunchRefused(
                f"The id_token's 'azp' ({azp}) is not one of its audiences {auds}.", status=401
            )
        if azp is None and len(auds) > 1:
            raise LaunchRefused(
                f"The id_token has several audiences {auds} and no 'azp' naming the tool's "
                "client id.",
                status=401,
            )
        client_id = azp if azp is not None else auds[0]
        row = find_registration(self._db, iss, client_id)
        if row is None:
            known = [r.client_id for r in list_registrations(self._db) if r.issuer == iss]
            if known:
                raise LaunchRefused(
                    f"The id_token is for client id {client_id}, which is not registered for "
                    f"{iss} (registered: {', '.join(known)}). Register it with `quizapp lti "
                    f"register --issuer {iss} --client-id {client_id} ...`.",
                    status=403,
                )
            raise LaunchRefused(
                f"The LMS {iss} is not registered with this tool. An administrator registers "
                f"it with `quizapp lti register --issuer {iss} --client-id {client_id} "
                "--auth-url URL --token-url URL --jwks-url URL` (see docs/lms.md).",
                status=403,
            )
        self._row, self._client_id = row, client_id
        self._registration = self._tool_config.to_registration(row)
        return self

    # -- 3. signature, exp, iat -------------------------------------------------------------
    def _platform_keys(self, refresh: bool) -> tuple[dict[str, Any], bool]:
        row = self._row
        assert row is not None
        fresh = row.jwks_fetched_at is not None and utcnow() - row.jwks_fetched_at < timedelta(
            seconds=JWKS_LIFETIME
        )
        if row.platform_jwks and fresh and not refresh:
            return row.platform_jwks, False
        url = row.key_set_url
        try:
            resp = self._requests_session.get(url)
            resp.raise_for_status()
            jwks = resp.json()
            if not isinstance(jwks, dict) or not isinstance(jwks.get("keys"), list):
                raise ValueError("no 'keys' list")
        except (requests.RequestException, ValueError) as exc:
            raise LaunchRefused(
                f"The LMS's public keys could not be read from {url} ({exc}); check the JWKS "
                "URL registered for it (`quizapp lti list`).",
                status=502,
            ) from None
        services.begin_write(self._db)
        try:
            stored = self._db.get(LtiRegistration, row.id)
            if stored is not None:
                stored.platform_jwks, stored.jwks_fetched_at = jwks, utcnow()
            self._db.commit()
        except BaseException:
            self._db.rollback()
            raise
        self._row = stored or row
        return jwks, True

    def get_public_key(self) -> tuple[str, str]:
        header = self._jwt.get("header", {})
        kid, alg = header.get("kid"), header.get("alg")
        if alg not in ALGORITHMS:
            raise LaunchRefused(
                f"The id_token is signed with algorithm {alg!r}; LTI 1.3 requires RS256.",
                status=401,
            )
        if not kid:
            raise LaunchRefused("The id_token's header names no key ('kid').", status=401)
        fetched = False
        while True:
            jwks, fetched_now = self._platform_keys(refresh=fetched)
            fetched = fetched or fetched_now
            for key in jwks.get("keys", []):
                if isinstance(key, dict) and key.get("kid") == kid:
                    if key.get("alg", "RS256") != alg:
                        break
                    try:
                        return JWK.from_json(json.dumps(key)).export_to_pem().decode(), alg
                    except Exception:
                        raise LaunchRefused(
                            f"The LMS's key '{kid}' is not a usable RSA public key.", status=502
                        ) from None
            if fetched:
                assert self._row is not None
                raise LaunchRefused(
                    f"The id_token was signed with key '{kid}' ({alg}), which the LMS's key set "
                    f"at {self._row.key_set_url} does not list: the token was not signed by "
                    "the registered LMS, or the registered JWKS URL is wrong.",
                    status=401,
                )
            fetched = True

    def validate_jwt_signature(self) -> _Launch:
        pem, alg = self.get_public_key()
        try:
            jwt.decode(
                self._get_id_token(),
                pem,
                algorithms=[alg],
                audience=self._client_id,
                leeway=LEEWAY,
                options={"require": ["exp", "iat", "iss", "aud", "nonce"]},
            )
        except jwt.ExpiredSignatureError:
            exp = self._jwt.get("body", {}).get("exp")
            raise LaunchRefused(
                f"The id_token expired ({_when(exp)}, now {_when(time.time())}): the launch "
                "took too long or the LMS's clock is wrong; start again from the LMS.",
                status=401,
            ) from None
        except (jwt.ImmatureSignatureError, jwt.InvalidIssuedAtError):
            iat = self._jwt.get("body", {}).get("iat")
            raise LaunchRefused(
                f"The id_token was issued in the future ({_when(iat)}, now {_when(time.time())}):"
                " the LMS's clock or this server's is wrong.",
                status=401,
            ) from None
        except jwt.MissingRequiredClaimError as exc:
            raise LaunchRefused(f"The id_token has no '{exc.claim}' claim.") from None
        except jwt.InvalidSignatureError:
            assert self._row is not None
            raise LaunchRefused(
                "The id_token's signature does not verify with the LMS's public key "
                f"'{self._jwt.get('header', {}).get('kid')}' from {self._row.key_set_url}: it "
                "was not signed by the registered LMS.",
                status=401,
            ) from None
        except jwt.InvalidTokenError as exc:
            raise LaunchRefused(f"The id_token was refused: {exc}.", status=401) from None
        return self

    # -- 4. nonce -------------------------------------------------------------------------
    def validate_nonce(self) -> _Launch:
        nonce = self._jwt.get("body", {}).get("nonce")
        if not isinstance(nonce, str) or not nonce:
            raise LaunchRefused("The id_token has no 'nonce' claim.")
        if not self._session_service.check_nonce(nonce):
            raise LaunchRefused(
                "This launch was already used, or its login started more than "
                f"{NONCE_LIFETIME // 60} minutes ago (its nonce is unknown): start again from "
                "the LMS.",
                status=401,
            )
        return self

    # -- 5. deployment --------------------------------------------------------------------
    def validate_deployment(self) -> _Launch:
        body: Mapping[str, Any] = self._jwt.get("body", {})
        dep = body.get(DEPLOYMENT_ID)
        if not isinstance(dep, str) or not dep:
            raise LaunchRefused(f"The id_token has no '{DEPLOYMENT_ID}' claim.")
        row = self._row
        assert row is not None
        if self._tool_config.find_deployment_by_params(row.issuer, dep, row.client_id) is None:
            raise LaunchRefused(
                f"Deployment {dep} of {row.issuer} (client {row.client_id}) is not registered. "
                f"An administrator adds it with `quizapp lti register --issuer {row.issuer} "
                f"--client-id {row.client_id} --auth-url ... --token-url ... --jwks-url ... "
                f"--deployment-id {dep}` (registering again keeps the existing ones).",
                status=403,
            )
        return self

    # -- 6. claims of the message type ----------------------------------------------------
    def validate_message(self) -> _Launch:
        body: Mapping[str, Any] = self._jwt.get("body", {})
        kind = body.get(MESSAGE_TYPE)
        if kind not in (RESOURCE_LAUNCH, DEEP_LINK_LAUNCH):
            raise LaunchRefused(
                f"The launch's message type {kind!r} is not one this tool handles "
                f"({RESOURCE_LAUNCH} or {DEEP_LINK_LAUNCH}); claim '{MESSAGE_TYPE}'."
            )
        required: list[tuple[str, Callable[[Any], bool]]] = [
            (VERSION, lambda v: v == "1.3.0"),
            ("sub", lambda v: isinstance(v, str) and 0 < len(v) <= LTI_ID_MAX),
            (ROLES, lambda v: isinstance(v, list)),
        ]
        if kind == RESOURCE_LAUNCH:
            required.append(
                (RESOURCE_LINK, lambda v: isinstance(v, dict) and isinstance(v.get("id"), str))
            )
        else:
            required.append(
                (
                    DEEP_LINKING_SETTINGS,
                    lambda v: (
                        isinstance(v, dict) and isinstance(v.get("deep_link_return_url"), str)
                    ),
                )
            )
        # Optional claims, but an object with a string "id" when present (LTI 1.3 core spec,
        # section 5.4.1 context claim; 5.4.3 tool platform claim has no required member).
        optional: list[tuple[str, Callable[[Any], bool]]] = [
            (CONTEXT, lambda v: isinstance(v, dict) and isinstance(v.get("id"), str)),
        ]
        for claim, ok in optional:
            if claim in body and not ok(body[claim]):
                raise LaunchRefused(
                    f"The id_token's '{claim}' claim is not valid (an object with a string "
                    f"'id' is required): {json.dumps(body[claim])[:200]}."
                )
        for claim, ok in required:
            if claim not in body:
                raise LaunchRefused(f"The id_token has no '{claim}' claim ({kind}).")
            if not ok(body[claim]):
                raise LaunchRefused(
                    f"The id_token's '{claim}' claim is not valid: {json.dumps(body[claim])[:200]}."
                )
        try:
            super().validate_message()
        except LtiException as exc:
            raise LaunchRefused(f"The launch message was refused: {exc}.") from None
        return self

    def validate(self) -> _Launch:
        self._validated = True
        try:
            self.validate_state()
            self.validate_jwt_format()
            self.validate_registration()
            self.validate_jwt_signature()
            self.validate_nonce()
            self.validate_deployment()
            self.validate_message()
            self.save_launch_data()
        except Exception:
            self._validated = False
            raise
        return self


def _when(epoch: Any) -> str:
    try:
        return datetime.fromtimestamp(float(epoch), UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (TypeError, ValueError, OverflowError, OSError):
        return repr(epoch)


@dataclass
class LaunchResult:
    """A valid launch: who (``user_id``, ``role``), what (``message_type``; the quiz or
    exercise the link opens, or ``problem`` saying why it opens nothing), and what the web
    layer keeps in the session (``launch_id`` for the deep-linking page, ``context_row``)."""

    user_id: int
    role: str
    message_type: str
    launch_id: str
    registration_id: int
    context_row: int | None
    quiz_id: str | None = None
    exercise_id: str | None = None
    title: str = ""
    problem: str | None = None
    lineitem_ids: list[int] = field(default_factory=list)


def _target(claims: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(quiz id, exercise id) named by the custom claim or the target link's query."""
    raw = claims.get(CUSTOM)
    custom = raw if isinstance(raw, dict) else {}
    quiz = custom.get(CUSTOM_QUIZ) or custom.get("quiz")
    exercise = custom.get(CUSTOM_EXERCISE) or custom.get("exercise")
    if not quiz and not exercise and isinstance(claims.get(TARGET_LINK_URI), str):
        query = parse_qs(urlsplit(claims[TARGET_LINK_URI]).query)
        quiz = (query.get("quiz") or [None])[0]
        exercise = (query.get("exercise") or [None])[0]
    quiz = quiz if isinstance(quiz, str) and quiz else None
    exercise = exercise if isinstance(exercise, str) and exercise else None
    return (None, exercise) if exercise else (quiz, None)


def _check_target(session: Session, quiz_id: str | None, exercise_id: str | None) -> str | None:
    """Why the link's quiz or exercise cannot be opened, or None."""
    if exercise_id is not None:
        ex = session.get(Exercise, exercise_id)
        if ex is None:
            return f"This link opens the exercise '{exercise_id}', which does not exist here."
        if ex.archived or ex.quiz.archived:
            return f"This link opens the exercise '{ex.title}', which was removed from the course."
        return None
    if quiz_id is not None:
        quiz = session.get(Quiz, quiz_id)
        if quiz is None:
            return f"This link opens the quiz '{quiz_id}', which does not exist here."
        if quiz.archived:
            return f"This link opens the quiz '{quiz.title}', which was removed from the course."
        return None
    return (
        "This link is not tied to a quiz or exercise of quizapp: the instructor adds the tool "
        "to the course with the LMS's content picker (deep linking), which ties each link."
    )


def _upsert_context(session: Session, reg_id: int, claims: Mapping[str, Any]) -> LtiContext | None:
    ctx_claim = claims.get(CONTEXT)
    if not isinstance(ctx_claim, dict) or not isinstance(ctx_claim.get("id"), str):
        return None
    ctx = session.scalar(
        select(LtiContext).where(
            LtiContext.registration_id == reg_id,
            LtiContext.context_id == ctx_claim["id"][:LTI_ID_MAX],
        )
    )
    if ctx is None:
        ctx = LtiContext(
            registration_id=reg_id,
            context_id=ctx_claim["id"][:LTI_ID_MAX],
            deployment_id=str(claims[DEPLOYMENT_ID])[:LTI_ID_MAX],
            ags_scopes=[],
        )
        session.add(ctx)
    ctx.deployment_id = str(claims[DEPLOYMENT_ID])[:LTI_ID_MAX]
    for attr in ("title", "label"):
        if isinstance(ctx_claim.get(attr), str):
            setattr(ctx, attr, ctx_claim[attr][:LTI_ID_MAX])
    ags = claims.get(AGS_ENDPOINT)
    if isinstance(ags, dict):
        if isinstance(ags.get("lineitems"), str):
            ctx.lineitems_url = ags["lineitems"]
        if isinstance(ags.get("scope"), list):
            ctx.ags_scopes = [s for s in ags["scope"] if isinstance(s, str)]
    nrps = claims.get(NRPS)
    if isinstance(nrps, dict) and isinstance(nrps.get("context_memberships_url"), str):
        ctx.memberships_url = nrps["context_memberships_url"]
    ctx.updated_at = utcnow()
    session.flush()
    return ctx


def _record_launch(
    session: Session, reg_id: int, claims: Mapping[str, Any], launch_id: str
) -> LaunchResult:
    """Account, course, membership, link and line item of a valid launch; flushes."""
    got = accounts.provision(
        session,
        registration_id=reg_id,
        sub=claims["sub"],
        name=accounts.name_from_claims(claims),
        email=claims.get("email") if isinstance(claims.get("email"), str) else None,
        roles=claims.get(ROLES),
        launched=True,
    )
    user = got.user
    result = LaunchResult(
        user_id=user.id,
        role=user.role,
        message_type=claims[MESSAGE_TYPE],
        launch_id=launch_id,
        registration_id=reg_id,
        context_row=None,
    )
    ctx = _upsert_context(session, reg_id, claims)
    if ctx is not None:
        result.context_row = ctx.id
        accounts.set_membership(session, ctx.id, user.id, claims.get(ROLES), True)
    if result.message_type != RESOURCE_LAUNCH:
        return result
    link_claim = claims[RESOURCE_LINK]
    quiz_id, exercise_id = _target(claims)
    link = None
    if ctx is not None:
        link = session.scalar(
            select(LtiLink).where(
                LtiLink.context_id == ctx.id,
                LtiLink.resource_link_id == link_claim["id"][:LTI_ID_MAX],
            )
        )
        if link is None:
            link = LtiLink(context_id=ctx.id, resource_link_id=link_claim["id"][:LTI_ID_MAX])
            session.add(link)
        if not (quiz_id or exercise_id):
            quiz_id, exercise_id = link.quiz_id, link.exercise_id
        if isinstance(link_claim.get("title"), str):
            link.title = link_claim["title"][:LTI_ID_MAX]
    result.title = str(link_claim.get("title") or "")
    result.problem = _check_target(session, quiz_id, exercise_id)
    if result.problem is None:
        result.quiz_id, result.exercise_id = quiz_id, exercise_id
        if link is not None:  # only a quiz or exercise that exists (foreign keys)
            link.quiz_id, link.exercise_id = quiz_id, exercise_id
    session.flush()
    if ctx is not None and result.problem is None:
        rid = resource_id(quiz_id=quiz_id) if quiz_id else resource_id(exercise_id=exercise_id)
        item = session.scalar(
            select(LtiLineItem).where(
                LtiLineItem.context_id == ctx.id, LtiLineItem.resource_id == rid
            )
        )
        raw_ags = claims.get(AGS_ENDPOINT)
        ags = raw_ags if isinstance(raw_ags, dict) else {}
        own = ags.get("lineitem") if isinstance(ags.get("lineitem"), str) else None
        if item is None and (own or ctx.lineitems_url):
            item = LtiLineItem(context_id=ctx.id, resource_id=rid)
            session.add(item)
        if item is not None:
            if own and not item.url:
                item.url = own
            if not item.resource_link_id:
                item.resource_link_id = link_claim["id"][:LTI_ID_MAX]
            session.flush()
            result.lineitem_ids.append(item.id)
    return result


def validate_launch(
    session: Session,
    request: PlainRequest,
    key: Callable[[], ToolKey],
    http: requests.Session,
) -> LaunchResult:
    """Validate a launch (the steps of the module docstring) and record it: the user's account,
    course, membership, link and line item; commits.  A student's grade on the link is queued
    (sent if they already have a score the LMS has not got).  Raises :class:`LaunchRefused`."""
    error = request.get_param("error")
    if error:
        # The platform's authentication error response instead of an id_token (OpenID Connect
        # Core 1.0, section 3.1.2.6: error, error_description, state).
        description = request.get_param("error_description") or ""
        raise LaunchRefused(
            f"The LMS refused the sign-in ({error[:100]}"
            + (f": {description[:300]}" if description else "")
            + "). Open the link from the LMS again; if it keeps failing, the LMS's administrator "
            "can see why in its tool configuration.",
            status=400,
        )
    if not request.get_param("id_token"):
        raise LaunchRefused(
            "The launch has no id_token: /lti/launch is where the LMS posts its launches; "
            "open the link from the LMS."
        )
    conf = DatabaseToolConf(session, key)
    storage = DatabaseStorage(session)
    launch = _Launch(request, conf, Sessions(request, storage), CookieJar(request), http, session)
    launch.set_launch_id("lti1p3-launch-" + str(uuid.uuid4()))
    launch.validate()
    # The sign-in is finished: its state is forgotten, so a replay of this launch is refused as
    # one no sign-in is waiting for (its nonce is already used too).
    storage.consume(f"lti1p3-{request.get_param('state')}")
    claims = dict(launch.get_launch_data())
    assert launch._row is not None
    reg_id = launch._row.id
    for attempt in range(2):
        services.begin_write(session)
        try:
            result = _record_launch(session, reg_id, claims, launch.get_launch_id())
            session.commit()
            break
        except IntegrityError:
            session.rollback()  # the same user's first launch on another host: once more
            if attempt:
                raise
        except BaseException:
            session.rollback()
            raise
    if result.role == "student" and result.lineitem_ids:
        queue_user(session, result.user_id, result.lineitem_ids)
    return result


__all__ = [
    "LaunchResult",
    "validate_launch",
]
