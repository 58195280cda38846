"""Tables of the LMS connection (LTI 1.3), on the declarative base of ``quizapp.models``.

Everything several hosts must agree on lives here, so that any host can answer any launch and
send any grade (the app keeps no state in process that correctness depends on):

- ``lti_keys``: the tool's RSA key pairs.  The public key (a JWK) is served at ``/lti/jwks``; the
  private key is stored encrypted with a key derived from the app's ``SECRET_KEY`` (see
  ``quizapp.lti.keys`` for why the database and not a file).  One key is active (``retired_at``
  NULL); ``quizapp lti rotate-key`` retires it and creates another.
- ``lti_registrations``: one per (issuer, client id): the platform's OIDC authorization URL,
  OAuth2 token URL and JWKS URL, and the platform's JWKS as last fetched (cached for an hour).
- ``lti_deployments``: the deployment ids accepted for a registration.
- ``lti_launch_data``: short-lived values of the OIDC flow, by key: nonces (deleted when used,
  so a nonce works once on every host), state parameters, the launch data a deep-linking page
  reads back.  Expired rows are deleted as new ones are written.
- ``lti_users``: which quizapp user a platform user (issuer's ``sub``) is.
- ``lti_contexts``: an LMS course seen in a launch, with its service URLs (line items
  container, the AGS scopes granted, the memberships URL for roster sync).
- ``lti_members``: a user's membership of a context (from launches and roster syncs).
- ``lti_links``: a resource link of a context and the quiz or exercise it opens.
- ``lti_lineitems``: the LMS's grade column of a quiz or exercise in a context, by our
  ``resourceId`` (``quiz:<id>`` / ``exercise:<id>``); ``url`` is known once found or created.
  ``claimed_at`` marks a host looking it up or creating it, so two hosts never create two.
- ``lti_grades``: per (line item, student): the grade queue (``pending``, ``next_try_at``,
  ``tries``, ``claimed_until``) and the last score the LMS accepted (``sent_*``), so only
  changed grades are sent; ``last_error`` is the LMS's answer in words when a send failed.

The Alembic revision creating them is ``migrations/versions/lti_0001_lms_connection.py``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from quizapp.models import Model, User, UTCDateTime, utcnow

#: Longest id accepted from a platform (issuer, client id, deployment id, sub, context id,
#: resource link id).  The specification limits ``sub`` to 255 ASCII characters.
LTI_ID_MAX = 255


class LtiKey(Model):
    """A key pair of the tool: ``kid`` (the JWK thumbprint, RFC 7638), the public JWK, the
    private key as PEM encrypted with Fernet (``quizapp.lti.keys``)."""

    __tablename__ = "lti_keys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kid: Mapped[str] = mapped_column(String(64), unique=True)
    public_jwk: Mapped[dict[str, Any]] = mapped_column(JSON)
    private_key: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    retired_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)


class LtiRegistration(Model):
    """The tool as registered in one platform (an LMS), by ``issuer`` and ``client_id``."""

    __tablename__ = "lti_registrations"
    __table_args__ = (UniqueConstraint("issuer", "client_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    issuer: Mapped[str] = mapped_column(String(LTI_ID_MAX))
    client_id: Mapped[str] = mapped_column(String(LTI_ID_MAX))
    auth_login_url: Mapped[str] = mapped_column(Text)
    auth_token_url: Mapped[str] = mapped_column(Text)
    key_set_url: Mapped[str] = mapped_column(Text)
    #: the ``aud`` of the client assertion when the platform wants another than the token URL.
    auth_audience: Mapped[str | None] = mapped_column(Text, default=None)
    platform_jwks: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    jwks_fetched_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    deployments: Mapped[list[LtiDeployment]] = relationship(
        back_populates="registration", order_by="LtiDeployment.id", cascade="all, delete-orphan"
    )


class LtiDeployment(Model):
    """A deployment id accepted for a registration (the tool installed in an account/course)."""

    __tablename__ = "lti_deployments"
    __table_args__ = (UniqueConstraint("registration_id", "deployment_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    registration_id: Mapped[int] = mapped_column(ForeignKey("lti_registrations.id"))
    deployment_id: Mapped[str] = mapped_column(String(LTI_ID_MAX))

    registration: Mapped[LtiRegistration] = relationship(back_populates="deployments")


class LtiLaunchData(Model):
    """A short-lived value of the OIDC flow (nonce, state parameters, launch data) by key."""

    __tablename__ = "lti_launch_data"

    key: Mapped[str] = mapped_column(String(LTI_ID_MAX), primary_key=True)
    value: Mapped[Any] = mapped_column(JSON)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)


class LtiUser(Model):
    """Platform user ``sub`` of registration ``registration_id`` is quizapp user ``user_id``."""

    __tablename__ = "lti_users"
    __table_args__ = (UniqueConstraint("registration_id", "sub"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    registration_id: Mapped[int] = mapped_column(ForeignKey("lti_registrations.id"))
    sub: Mapped[str] = mapped_column(String(LTI_ID_MAX))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_launch_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)

    user: Mapped[User] = relationship()


class LtiContext(Model):
    """An LMS course (the LTI context) seen in a launch, with the service URLs it offered."""

    __tablename__ = "lti_contexts"
    __table_args__ = (UniqueConstraint("registration_id", "context_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    registration_id: Mapped[int] = mapped_column(ForeignKey("lti_registrations.id"))
    context_id: Mapped[str] = mapped_column(String(LTI_ID_MAX))
    deployment_id: Mapped[str] = mapped_column(String(LTI_ID_MAX))
    title: Mapped[str] = mapped_column(String(LTI_ID_MAX), default="")
    label: Mapped[str] = mapped_column(String(LTI_ID_MAX), default="")
    #: AGS: the line items container URL and the scopes the platform granted, if offered.
    lineitems_url: Mapped[str | None] = mapped_column(Text, default=None)
    ags_scopes: Mapped[list[str]] = mapped_column(JSON, default=list)
    #: NRPS: the context memberships URL, if offered.
    memberships_url: Mapped[str | None] = mapped_column(Text, default=None)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    registration: Mapped[LtiRegistration] = relationship()


class LtiMember(Model):
    """``user_id`` belongs to context ``context_id`` (``active`` false once the LMS lists them
    as inactive or deleted); ``roles`` are the LTI role URIs last seen."""

    __tablename__ = "lti_members"
    __table_args__ = (UniqueConstraint("context_id", "user_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    context_id: Mapped[int] = mapped_column(ForeignKey("lti_contexts.id"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    roles: Mapped[list[str]] = mapped_column(JSON, default=list)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class LtiLink(Model):
    """Resource link ``resource_link_id`` of a context opens a quiz or one exercise."""

    __tablename__ = "lti_links"
    __table_args__ = (UniqueConstraint("context_id", "resource_link_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    context_id: Mapped[int] = mapped_column(ForeignKey("lti_contexts.id"))
    resource_link_id: Mapped[str] = mapped_column(String(LTI_ID_MAX))
    quiz_id: Mapped[str | None] = mapped_column(ForeignKey("quizzes.id"), default=None)
    exercise_id: Mapped[str | None] = mapped_column(ForeignKey("exercises.id"), default=None)
    title: Mapped[str] = mapped_column(String(LTI_ID_MAX), default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class LtiLineItem(Model):
    """The LMS's grade column for ``resource_id`` (``quiz:<id>`` / ``exercise:<id>``) in a
    context; ``url`` is the line item's id (URL) once found or created."""

    __tablename__ = "lti_lineitems"
    __table_args__ = (UniqueConstraint("context_id", "resource_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    context_id: Mapped[int] = mapped_column(ForeignKey("lti_contexts.id"))
    resource_id: Mapped[str] = mapped_column(String(LTI_ID_MAX))
    url: Mapped[str | None] = mapped_column(Text, default=None)
    #: the resource link the line item was first seen with (sent when creating it).
    resource_link_id: Mapped[str | None] = mapped_column(String(LTI_ID_MAX), default=None)
    #: set while one host looks the line item up or creates it (others wait).
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    context: Mapped[LtiContext] = relationship()


class LtiGrade(Model):
    """A student's grade on a line item: the queue entry and the last score the LMS accepted.

    - ``pending``: a send is wanted (after a graded submit, ``send-grades``, a retry);
      ``force``: send even if the score equals the last one sent.
    - ``next_try_at``: not before this time (backoff after failures); ``tries``: failed sends
      since the last success; ``claimed_until``: a host is sending it until then.
    - ``sent_given`` / ``sent_maximum`` / ``sent_progress`` / ``sent_at``: what the LMS last
      accepted (scoreGiven, scoreMaximum, activityProgress) and when.
    - ``last_status`` / ``last_error`` / ``last_error_at``: the last failure: the HTTP status
      (None when the LMS could not be reached) and the explanation shown to the instructor.
    """

    __tablename__ = "lti_grades"
    __table_args__ = (
        UniqueConstraint("lineitem_id", "user_id"),
        Index("ix_lti_grades_due", "pending", "next_try_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    lineitem_id: Mapped[int] = mapped_column(ForeignKey("lti_lineitems.id"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    pending: Mapped[bool] = mapped_column(Boolean, default=True)
    force: Mapped[bool] = mapped_column(Boolean, default=False)
    queued_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    next_try_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    claimed_until: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    tries: Mapped[int] = mapped_column(Integer, default=0)
    sent_given: Mapped[float | None] = mapped_column(Float, default=None)
    sent_maximum: Mapped[float | None] = mapped_column(Float, default=None)
    sent_progress: Mapped[str | None] = mapped_column(String(32), default=None)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    last_status: Mapped[int | None] = mapped_column(Integer, default=None)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
    last_error_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)

    lineitem: Mapped[LtiLineItem] = relationship()
    user: Mapped[User] = relationship()


__all__ = [
    "LTI_ID_MAX",
    "LtiContext",
    "LtiDeployment",
    "LtiGrade",
    "LtiKey",
    "LtiLaunchData",
    "LtiLineItem",
    "LtiLink",
    "LtiMember",
    "LtiRegistration",
    "LtiUser",
]
