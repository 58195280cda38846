"""Flask extensions, created unbound and attached in ``create_app``."""

from __future__ import annotations

from flask_login import LoginManager
from flask_migrate import Migrate
from flask_wtf.csrf import CSRFProtect

from quizapp.models import db

login_manager = LoginManager()
login_manager.login_view = "auth.login"
login_manager.login_message = "Please sign in to see this page."
login_manager.login_message_category = "info"
login_manager.session_protection = "basic"

csrf = CSRFProtect()
migrate = Migrate()

__all__ = ["db", "login_manager", "csrf", "migrate"]
