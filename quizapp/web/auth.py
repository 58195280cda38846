"""Register, sign in, sign out, the account page (Flask-Login sessions; CSRF on every form).

Signing out, "sign out everywhere", a password change and a reset all raise the user's
``session_version`` (``services.revoke_everything``): every session and remember-me cookie of the
account stops working, copies included, since the cookies carry the version
(``User.get_id``).  "Sign out everywhere", a password change and a reset revoke the API tokens
too.
"""

from __future__ import annotations

import hmac

from flask import Blueprint, current_app, flash, redirect, render_template, request, url_for
from flask_login import current_user, login_required, login_user, logout_user
from werkzeug.wrappers import Response

from quizapp import services
from quizapp.models import current_session, db
from quizapp.web.extensions import (
    DEVICE_COOKIE,
    account_key,
    account_only_key,
    address_key,
    device_cookie_value,
    failed_login,
    is_known_device,
    limit,
    limiter,
)
from quizapp.web.forms import ChangePasswordForm, EmptyForm, LoginForm, RegisterForm
from quizapp.web.security import is_safe_next

bp = Blueprint("auth", __name__)


def _next_target() -> str:
    target = request.values.get("next")
    return target if is_safe_next(target) else url_for("student.home")


def sign_in_limits(methods: list[str] | None = None):
    """The failed-sign-in limits of ``POST /login`` and ``POST /api/v1/token`` (shared by both;
    each counts wrong passwords only, see ``failed_login``):

    - per account and address, or per account and browser for a browser that signed in to that
      account before (``QUIZAPP_LIMIT_LOGIN_FAILURES``, 10 per 15 minutes): guessing is slow, and
      nobody, not even a classmate behind the same address, can lock out a student's own browser;
    - per account from every address together (``QUIZAPP_LIMIT_LOGIN_ACCOUNT``, 20 per 15
      minutes): guessing from many addresses is slow too; known browsers are exempt;
    - per address (``QUIZAPP_LIMIT_LOGIN``, 60 wrong passwords a minute): one address trying
      many accounts; successful sign-ins never count (a class behind one NAT signs in at once),
      known browsers are exempt.

    Every window ends at most its length after the last wrong password: no account is ever
    locked for good.
    """

    def apply(view):
        view = limiter.shared_limit(
            limit("QUIZAPP_LIMIT_LOGIN_ACCOUNT"),
            "login-account",
            methods=methods,
            key_func=account_only_key,
            deduct_when=failed_login,
            exempt_when=is_known_device,
        )(view)
        view = limiter.shared_limit(
            limit("QUIZAPP_LIMIT_LOGIN_FAILURES"),
            "login-failures",
            methods=methods,
            key_func=account_key,
            deduct_when=failed_login,
        )(view)
        return limiter.shared_limit(
            limit("QUIZAPP_LIMIT_LOGIN"),
            "login-address",
            methods=methods,
            key_func=address_key,
            deduct_when=failed_login,
            exempt_when=is_known_device,
        )(view)

    return apply


def remember_device(response: Response, username: str) -> Response:
    """Give the browser the device cookie of a sign-in to ``username`` (see ``sign_in_limits``;
    HttpOnly, SameSite=Lax, Secure with ``QUIZAPP_HTTPS``, a year)."""
    from quizapp.web.extensions import DEVICE_COOKIE_DAYS

    response.set_cookie(
        DEVICE_COOKIE,
        device_cookie_value(username, request.cookies.get(DEVICE_COOKIE)),
        max_age=DEVICE_COOKIE_DAYS * 86400,
        httponly=True,
        samesite="Lax",
        secure=bool(current_app.config.get("SESSION_COOKIE_SECURE")),
    )
    return response


@bp.route("/login", methods=["GET", "POST"])
@sign_in_limits(methods=["POST"])
def login() -> Response | str:
    if current_user.is_authenticated:
        return redirect(_next_target())
    form = LoginForm()
    if form.validate_on_submit():
        user = services.authenticate(
            current_session(), form.username.data or "", form.password.data or ""
        )
        if user is not None:
            login_user(user, remember=bool(form.remember.data))
            return remember_device(redirect(_next_target()), user.username)
        flash("Wrong username or password.", "error")
    next_value = request.values.get("next")
    return render_template(
        "auth/login.html", form=form, next=next_value if is_safe_next(next_value) else None
    )


@bp.route("/register", methods=["GET", "POST"])
@limiter.limit(limit("QUIZAPP_LIMIT_REGISTER"), methods=["POST"])
def register() -> Response | str | tuple[str, int]:
    if not current_app.config.get("QUIZAPP_REGISTRATION", True):
        return render_template(
            "errors/error.html",
            status=403,
            message="Registration is closed; ask your instructor for an account.",
        ), 403
    if current_user.is_authenticated:
        return redirect(url_for("student.home"))
    join_code = current_app.config.get("QUIZAPP_JOIN_CODE")
    form = RegisterForm()
    if form.validate_on_submit():
        given = (form.join_code.data or "").strip()
        display_problem = email_problem = None
        try:
            services.validate_display_name(form.display_name.data or "")
        except services.BadRequest as err:
            display_problem = err.message
        try:
            services.validate_email(form.email.data)
        except services.BadRequest as err:
            email_problem = err.message
        if join_code and not hmac.compare_digest(given.encode(), str(join_code).encode()):
            form.join_code.errors = [*form.join_code.errors, "That join code is not right."]
        elif display_problem:
            form.display_name.errors = [*form.display_name.errors, display_problem]
        elif email_problem:
            form.email.errors = [*form.email.errors, email_problem]
        else:
            try:
                user = services.create_user(
                    current_session(),
                    form.username.data or "",
                    form.password.data or "",
                    display_name=form.display_name.data or "",
                    email=form.email.data or None,
                )
            except services.ServiceError as err:
                form.username.errors = [*form.username.errors, err.message]
            else:
                login_user(user)
                flash(f"Welcome, {user.name}! Pick an exercise to start.", "success")
                return redirect(url_for("student.home"))
    return render_template("auth/register.html", form=form, join_code_required=bool(join_code))


@bp.route("/logout", methods=["POST"])
@login_required
def logout() -> Response:
    """Sign out: this browser's cookies are cleared, and every copy of them stops working (the
    session version is raised, which signs the account out of its other browsers too)."""
    form = EmptyForm()
    if form.validate_on_submit():
        services.end_sessions(current_session(), int(current_user.id), tokens=False)
        logout_user()
        flash("You are signed out.", "info")
    return redirect(url_for("auth.login"))


def _account_page(form: ChangePasswordForm | None = None, status: int = 200) -> tuple[str, int]:
    from quizapp.models import ApiToken

    user = current_user._get_current_object()
    tokens = (
        db.session.query(ApiToken)
        .filter(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None))
        .count()
    )
    return render_template(
        "auth/account.html",
        form=form or ChangePasswordForm(),
        live_tokens=tokens,
    ), status


@bp.route("/account")
@login_required
def account() -> tuple[str, int]:
    """The signed-in user's own page: change the password, sign out everywhere."""
    return _account_page()


def _password_key() -> str:
    return f"password-change:{current_user.id}" if current_user.is_authenticated else "anon"


@bp.route("/account/password", methods=["POST"])
@login_required
@limiter.limit(
    limit("QUIZAPP_LIMIT_LOGIN_FAILURES"),
    methods=["POST"],
    key_func=_password_key,
    deduct_when=lambda response: response.status_code == 400,
)
def change_password() -> Response | tuple[str, int]:
    """Change the password (the current one is asked first); every session, remember-me cookie
    and API token of the account ends, and this browser is signed in again."""
    form = ChangePasswordForm()
    if not form.validate_on_submit():
        return _account_page(form, 400)
    user = current_user._get_current_object()
    remember_cookie = current_app.config.get("REMEMBER_COOKIE_NAME", "remember_token")
    remember = bool(request.cookies.get(remember_cookie))
    try:
        user = services.change_password(
            current_session(), user, form.current.data or "", form.password.data or ""
        )
    except services.BadRequest as err:
        form.current.errors = [*form.current.errors, err.message]
        return _account_page(form, 400)
    logout_user()
    login_user(user, remember=remember)
    flash(
        "Your password is changed. Every other session and API token of your account was ended.",
        "success",
    )
    return redirect(url_for("auth.account"))


@bp.route("/account/sign-out-everywhere", methods=["POST"])
@login_required
def sign_out_everywhere() -> Response:
    """End every session, remember-me cookie and API token of the account, this one too."""
    form = EmptyForm()
    if form.validate_on_submit():
        services.end_sessions(current_session(), int(current_user.id), tokens=True)
        logout_user()
        flash("You are signed out everywhere: every session and API token of yours ended.", "info")
        return redirect(url_for("auth.login"))
    return redirect(url_for("auth.account"))
