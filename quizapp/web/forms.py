"""WTForms forms (Flask-WTF: each carries a CSRF token)."""

from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import BooleanField, EmailField, PasswordField, StringField
from wtforms.validators import DataRequired, EqualTo, Length, Optional

from quizapp.models import USERNAME_MAX
from quizapp.services import PASSWORD_MAX, PASSWORD_MIN


class LoginForm(FlaskForm):
    username = StringField("Username", validators=[DataRequired(), Length(max=4 * USERNAME_MAX)])
    password = PasswordField("Password", validators=[DataRequired(), Length(max=PASSWORD_MAX)])
    remember = BooleanField("Keep me signed in on this device")


class RegisterForm(FlaskForm):
    username = StringField(
        "Username",
        validators=[DataRequired(), Length(max=USERNAME_MAX)],
        description="Letters, digits and . @ + - _ ; not case-sensitive.",
    )
    display_name = StringField(
        "Your name (shown to your instructor)", [Optional(), Length(max=120)]
    )
    email = EmailField("Email (optional)", validators=[Optional(), Length(max=254)])
    password = PasswordField(
        "Password",
        validators=[DataRequired(), Length(min=PASSWORD_MIN, max=PASSWORD_MAX)],
        description=f"At least {PASSWORD_MIN} characters.",
    )
    confirm = PasswordField(
        "Repeat the password",
        validators=[DataRequired(), EqualTo("password", message="The passwords differ.")],
    )
    join_code = StringField("Course join code", validators=[Optional(), Length(max=200)])


class ChangePasswordForm(FlaskForm):
    current = PasswordField(
        "Current password", validators=[DataRequired(), Length(max=PASSWORD_MAX)]
    )
    password = PasswordField(
        "New password",
        validators=[DataRequired(), Length(min=PASSWORD_MIN, max=PASSWORD_MAX)],
        description=f"At least {PASSWORD_MIN} characters.",
    )
    confirm = PasswordField(
        "Repeat the new password",
        validators=[DataRequired(), EqualTo("password", message="The passwords differ.")],
    )


class EmptyForm(FlaskForm):
    """A form with only the CSRF token (logout, "try a new variant")."""
