"""``quizapp lti ...``: the LMS connection (LTI 1.3) from the terminal.

``register`` / ``list`` / ``remove`` manage the registrations of the tool in platforms;
``config`` prints the tool's configuration for pasting into the LMS; ``send-grades`` sends a
quiz's grades now; ``retry`` sends whatever is queued and due (for cron when no server runs the
background sender); ``sync-roster`` reads the courses' member lists; ``rotate-key`` makes a new
key pair.  The logic is in ``quizapp.lti``.  Exit codes: 0 done, 1 refused or some grades not
sent, 2 bad usage.
"""

from __future__ import annotations

import json
import os
from typing import Any

import click

from quizapp.cli._group import main

DEFAULT_BASE_URL = "http://127.0.0.1:5000"


def _app() -> Any:
    from quizapp.web import create_app

    return create_app()


def _base_url(value: str | None) -> str:
    return (value or os.environ.get("QUIZAPP_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


_BASE_HELP = (
    "Where users reach the app, e.g. https://quiz.example.edu (default $QUIZAPP_BASE_URL, "
    f"else {DEFAULT_BASE_URL})."
)


def _key_getter(app: Any) -> Any:
    from quizapp.lti import keys
    from quizapp.models import current_session

    def key() -> Any:
        return keys.tool_key(current_session(), app.config["SECRET_KEY"])

    return key


def _echo_config(base: str) -> None:
    from quizapp.lti import toolconfig

    click.echo(toolconfig.config_text(toolconfig.tool_urls(base)))
    if base == DEFAULT_BASE_URL and not os.environ.get("QUIZAPP_BASE_URL"):
        click.echo(
            f"  (these use {DEFAULT_BASE_URL}: give --base-url or set QUIZAPP_BASE_URL to the "
            "address the LMS and students use)",
            err=True,
        )


@main.group("lti")
def lti() -> None:
    """The LMS connection (LTI 1.3: launches, deep linking, grades, rosters)."""


@lti.command("register")
@click.option("--issuer", required=True, help="The platform's issuer (iss), a URL.")
@click.option("--client-id", required=True, help="The client id the LMS gave the tool.")
@click.option("--auth-url", required=True, help="The platform's OIDC authorization URL.")
@click.option("--token-url", required=True, help="The platform's OAuth2 token URL.")
@click.option("--jwks-url", required=True, help="The platform's public keyset (JWKS) URL.")
@click.option(
    "--deployment-id",
    "deployment_ids",
    multiple=True,
    help="A deployment id to accept (repeat for several; registering again adds more).",
)
@click.option("--audience", default=None, help="The token request's audience if not the token URL.")
@click.option("--base-url", default=None, help=_BASE_HELP)
def register(
    issuer: str,
    client_id: str,
    auth_url: str,
    token_url: str,
    jwks_url: str,
    deployment_ids: tuple[str, ...],
    audience: str | None,
    base_url: str | None,
) -> None:
    """Register the tool in a platform (or update the registration and add deployment ids),
    create the tool's key pair if there is none, and print the tool's configuration."""
    from quizapp.lti import keys, registry
    from quizapp.models import current_session
    from quizapp.services import ServiceError

    app = _app()
    with app.app_context():
        try:
            result = registry.register(
                current_session(),
                issuer=issuer,
                client_id=client_id,
                auth_url=auth_url,
                token_url=token_url,
                jwks_url=jwks_url,
                deployment_ids=deployment_ids,
                audience=audience,
            )
        except ServiceError as err:
            raise click.ClickException(err.message) from None
        try:
            kid = keys.tool_key(current_session(), app.config["SECRET_KEY"]).kid
        except keys.KeyUnavailable as err:
            raise click.ClickException(str(err)) from None
        reg = result.registration
        deps = [d.deployment_id for d in reg.deployments]
        what = "Registered" if result.created else "Updated"
        click.echo(f"{what} {reg.issuer} (client {reg.client_id}).")
        for name, (old, new) in result.changed.items():
            click.echo(f"  {name}: {old} -> {new}")
        if result.added_deployments:
            click.echo(f"  deployments added: {', '.join(result.added_deployments)}")
        click.echo(f"  deployments accepted: {', '.join(deps) if deps else 'none yet'}")
        if not deps:
            click.echo(
                "  (launches are refused until a deployment id is added: run this command "
                "again with --deployment-id ID once the tool is installed in the LMS)",
                err=True,
            )
        click.echo(f"  tool key: {kid}")
    _echo_config(_base_url(base_url))


@lti.command("list")
def list_() -> None:
    """List the registrations with their deployments, courses and grade columns."""
    from sqlalchemy import func, select

    from quizapp.lti import registry
    from quizapp.lti.models import LtiContext, LtiLineItem
    from quizapp.models import current_session, db

    app = _app()
    with app.app_context():
        regs = registry.list_registrations(current_session())
        if not regs:
            click.echo("No registrations. Add one with `quizapp lti register ...`.")
            return
        for reg in regs:
            courses = db.session.scalar(
                select(func.count()).where(LtiContext.registration_id == reg.id)
            )
            columns = db.session.scalar(
                select(func.count())
                .select_from(LtiLineItem)
                .join(LtiContext, LtiContext.id == LtiLineItem.context_id)
                .where(LtiContext.registration_id == reg.id)
            )
            deps = ", ".join(d.deployment_id for d in reg.deployments) or "none"
            click.echo(f"{reg.issuer}  client {reg.client_id}")
            click.echo(f"  deployments: {deps}")
            click.echo(f"  auth URL:    {reg.auth_login_url}")
            click.echo(f"  token URL:   {reg.auth_token_url}")
            click.echo(f"  JWKS URL:    {reg.key_set_url}")
            if reg.auth_audience:
                click.echo(f"  audience:    {reg.auth_audience}")
            click.echo(f"  courses: {courses}, grade columns: {columns}")


@lti.command("remove")
@click.option("--issuer", required=True, help="The platform's issuer.")
@click.option("--client-id", default=None, help="Needed when the issuer has several.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def remove(issuer: str, client_id: str | None, yes: bool) -> None:
    """Remove a registration and what hangs on it (courses seen, links, grade columns, the
    grade queue); quizapp's accounts, submissions and progress stay."""
    from quizapp.lti import registry
    from quizapp.models import current_session
    from quizapp.services import ServiceError

    app = _app()
    with app.app_context():
        reg = registry.find_registration(current_session(), issuer, client_id)
        if reg is not None and not yes:
            click.confirm(
                f"Remove {reg.issuer} (client {reg.client_id}) and its courses, links and "
                "queued grades?",
                abort=True,
            )
        try:
            result = registry.remove_registration(current_session(), issuer, client_id)
        except ServiceError as err:
            raise click.ClickException(err.message) from None
    counts = ", ".join(f"{n} {name}" for name, n in result.counts.items() if name != "registration")
    click.echo(f"Removed {result.issuer} (client {result.client_id}): {counts}.")


@lti.command("config")
@click.option("--base-url", default=None, help=_BASE_HELP)
@click.option("--json", "as_json", is_flag=True, help="Canvas's JSON configuration instead.")
def config(base_url: str | None, as_json: bool) -> None:
    """Print the tool's configuration for the LMS (URLs and scopes)."""
    from quizapp.lti import toolconfig

    base = _base_url(base_url)
    if as_json:
        urls = toolconfig.tool_urls(base)
        click.echo(json.dumps(toolconfig.canvas_config(urls), indent=2))
        return
    _echo_config(base)


def _deliver_all(app: Any, ids: list[int]) -> Any:
    """Deliver the queued rows ``ids`` now, in batches; returns the combined report."""
    from quizapp.lti import grades
    from quizapp.lti.http import TimeoutSession
    from quizapp.models import current_session

    report = grades.DeliveryReport()
    key = _key_getter(app)
    with TimeoutSession() as http:
        for k in range(0, len(ids), 100):
            part = grades.deliver_due(
                current_session(), key, http, only=ids[k : k + 100], limit=100
            )
            report.outcomes += part.outcomes
    return report


def _print_report(report: Any, what: str) -> None:
    click.echo(f"{what}: {report.summary()}.")
    for message in report.errors():
        click.echo(f"  failed: {message}", err=True)
    if report.count("failed"):
        raise click.ClickException(
            f"{report.count('failed')} grades were not sent; they stay queued and are retried "
            "(the instructor's LMS page lists them)."
        )


@lti.command("send-grades")
@click.argument("quiz_id")
@click.option("--force", is_flag=True, help="Send every grade, even those the LMS has already.")
def send_grades(quiz_id: str, force: bool) -> None:
    """Send the students' grades on QUIZ_ID (a quiz folder, or an exercise id QUIZ/NAME) to
    every LMS course that links it: only those that changed since the last successful send,
    unless --force."""
    from quizapp.lti import grades
    from quizapp.models import current_session
    from quizapp.services import ServiceError

    app = _app()
    kind = "exercise" if "/" in quiz_id else "quiz"
    with app.app_context():
        try:
            ids = grades.queue_resource(
                current_session(),
                quiz_id=quiz_id if kind == "quiz" else None,
                exercise_id=quiz_id if kind == "exercise" else None,
                force=force,
            )
        except ServiceError as err:
            raise click.ClickException(err.message) from None
        report = _deliver_all(app, ids)
    _print_report(report, f"Grades of {kind} {quiz_id}")


@lti.command("retry")
def retry() -> None:
    """Send every queued grade that is due now (run it from cron when no server runs the
    background sender)."""
    from quizapp.lti import grades
    from quizapp.lti.http import TimeoutSession
    from quizapp.models import current_session

    app = _app()
    report = grades.DeliveryReport()
    with app.app_context(), TimeoutSession() as http:
        key = _key_getter(app)
        while True:
            part = grades.deliver_due(current_session(), key, http, limit=100)
            report.outcomes += part.outcomes
            if len(part.outcomes) < 100:
                break
    _print_report(report, "Queued grades")


@lti.command("sync-roster")
@click.option("--course", default=None, help="Only this course (LMS context id or title).")
def sync_roster(course: str | None) -> None:
    """Create and update student accounts from the member lists of the LMS courses."""
    from quizapp.lti import roster
    from quizapp.lti.http import TimeoutSession
    from quizapp.models import current_session
    from quizapp.services import ServiceError

    app = _app()
    failed = 0
    with app.app_context(), TimeoutSession() as http:
        try:
            rows = (
                [roster.find_context(current_session(), course)]
                if course
                else roster.syncable_contexts(current_session())
            )
        except ServiceError as err:
            raise click.ClickException(err.message) from None
        if not rows:
            click.echo("No LMS course with a member list yet: launch the tool from the LMS first.")
            return
        key = _key_getter(app)
        for ctx in [(c.id, c.title or c.context_id) for c in rows]:
            try:
                result = roster.sync_roster(current_session(), ctx[0], key, http)
            except ServiceError as err:
                click.echo(f"{ctx[1]}: {err.message}", err=True)
                failed += 1
                continue
            click.echo(result.summary())
            failed += bool(result.error)
            for name in result.created:
                click.echo(f"  created {name}")
    if failed:
        raise click.ClickException(f"{failed} courses were not synced.")


@lti.command("rotate-key")
def rotate_key() -> None:
    """Make a new key pair for the tool (the LMS picks it up from /lti/jwks by itself)."""
    from quizapp.lti import keys
    from quizapp.lti.http import forget_tokens
    from quizapp.models import current_session

    app = _app()
    with app.app_context():
        key = keys.rotate_key(current_session(), app.config["SECRET_KEY"])
    forget_tokens()
    click.echo(f"New tool key {key.kid}; the old one is no longer published.")
