"""Deep linking (LTI Deep Linking 2.0): the LMS's "add content" dialog opens the tool with a
deep-linking launch (validated and stored by :mod:`quizapp.lti.launch`); the content-selection
page reads it back (:func:`deep_link_request`) and the tool signs its answer, one resource link
and line item per chosen quiz or exercise (:func:`deep_link_answer`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import requests
from pylti1p3.deep_link_resource import DeepLinkResource
from pylti1p3.lineitem import LineItem
from sqlalchemy.orm import Session

from quizapp import services
from quizapp.lti.adapters import CookieJar, DatabaseStorage, PlainRequest, Sessions
from quizapp.lti.claims import (
    CUSTOM_EXERCISE,
    CUSTOM_QUIZ,
    DEEP_LINK_LAUNCH,
    DEEP_LINKING_SETTINGS,
    MESSAGE_TYPE,
    LaunchRefused,
)
from quizapp.lti.keys import ToolKey
from quizapp.lti.launch import _Launch
from quizapp.lti.registry import DatabaseToolConf
from quizapp.lti.scores import resource_id, resource_points


@dataclass
class DeepLinkRequest:
    """What the deep-linking page needs from the stored launch: the LMS's return URL, whether
    it accepts several items, its title, and the user it was for."""

    launch_id: str
    return_url: str
    accept_multiple: bool
    title: str
    user_sub: str
    issuer: str
    client_id: str


def _stored_launch(
    session: Session, launch_id: str, key: Callable[[], ToolKey]
) -> tuple[_Launch, dict[str, Any]]:
    storage = DatabaseStorage(session)
    request = PlainRequest({}, {}, secure=True)
    body = storage.get_value(launch_id) if launch_id.startswith("lti1p3-launch-") else None
    if not isinstance(body, dict) or body.get(MESSAGE_TYPE) != DEEP_LINK_LAUNCH:
        raise LaunchRefused(
            "This content selection has expired (or was not started from the LMS); open the "
            "LMS's 'add content' dialog for this tool again.",
            status=410,
        )
    launch = _Launch(
        request,
        DatabaseToolConf(session, key),
        Sessions(request, storage),
        CookieJar(request),
        requests.Session(),
        session,
    )
    launch.set_launch_id(launch_id).set_auto_validation(enable=False)
    # The stored claims are the id_token's body (validated at launch), kept as a plain dict.
    launch.set_jwt({"body": body}).set_restored()  # type: ignore[typeddict-item]  # pylti1p3 wants its TLaunchData TypedDict
    launch.validate_registration()
    return launch, body


def deep_link_request(
    session: Session, launch_id: str, key: Callable[[], ToolKey]
) -> DeepLinkRequest:
    """The stored deep-linking launch ``launch_id``; raises :class:`LaunchRefused` (410) when
    it expired or is not a deep-linking launch."""
    launch, body = _stored_launch(session, launch_id, key)
    settings = body[DEEP_LINKING_SETTINGS]
    multiple = settings.get("accept_multiple", True)
    assert launch._row is not None
    result = DeepLinkRequest(
        launch_id=launch_id,
        return_url=settings["deep_link_return_url"],
        accept_multiple=multiple not in (False, "false"),
        title=str(settings.get("title") or ""),
        user_sub=body["sub"],
        issuer=launch._row.issuer,
        client_id=launch._row.client_id,
    )
    session.rollback()
    return result


@dataclass
class DeepLinkAnswer:
    """The deep-linking response: post ``jwt`` as form field ``JWT`` to ``return_url``."""

    return_url: str
    jwt: str
    items: list[dict[str, Any]]


def deep_link_answer(
    session: Session,
    launch_id: str,
    choices: list[tuple[str, str]],
    launch_url: str,
    key: Callable[[], ToolKey],
) -> DeepLinkAnswer:
    """Sign the deep-linking response for ``choices`` (``("quiz", id)`` / ``("exercise", id)``):
    one LTI resource link per choice, opening ``launch_url`` with the custom parameter naming
    it, and a line item (``scoreMaximum`` = its points, ``label`` = its title, ``resourceId``
    = ``quiz:<id>``/``exercise:<id>``, ``tag`` = ``quizapp``) so the LMS creates the grade
    column.  Raises ``services.BadRequest`` for an unknown choice or several when the LMS
    accepts one, :class:`LaunchRefused` for an expired launch."""
    launch, body = _stored_launch(session, launch_id, key)
    settings = body[DEEP_LINKING_SETTINGS]
    if not choices:
        raise services.BadRequest("Choose at least one quiz or exercise.")
    if len(choices) > 1 and settings.get("accept_multiple", True) in (False, "false"):
        raise services.BadRequest("The LMS accepts one item here: choose only one.")
    resources = []
    items = []
    for kind, ident in choices:
        if kind not in ("quiz", "exercise"):
            raise services.BadRequest(f"Unknown kind of item {kind!r}.")
        rid = resource_id(quiz_id=ident) if kind == "quiz" else resource_id(exercise_id=ident)
        found = resource_points(session, rid)
        if found is None:
            raise services.BadRequest(f"There is no {kind} '{ident}' (or it was removed).")
        title, points = found
        custom = {CUSTOM_QUIZ if kind == "quiz" else CUSTOM_EXERCISE: ident}
        resource = (
            DeepLinkResource()
            .set_url(launch_url)
            .set_title(title)
            .set_custom_params(custom)
            .set_lineitem(
                LineItem()
                .set_score_maximum(points if points > 0 else 1.0)
                .set_label(title)
                .set_resource_id(rid)
                .set_tag("quizapp")
            )
        )
        resources.append(resource)
        items.append(resource.to_dict())
    deep_link = launch.get_deep_link()
    token = deep_link.get_response_jwt(resources)
    session.rollback()
    return DeepLinkAnswer(return_url=settings["deep_link_return_url"], jwt=token, items=items)


__all__ = [
    "DeepLinkAnswer",
    "DeepLinkRequest",
    "deep_link_answer",
    "deep_link_request",
]
