"""The LTI 1.3 names the tool reads (claims, message types, custom parameters), the time limits
of a login and a launch, and :class:`LaunchRefused`, the error of a refused login or launch."""

from __future__ import annotations

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"


MESSAGE_TYPE = CLAIM + "message_type"


VERSION = CLAIM + "version"


DEPLOYMENT_ID = CLAIM + "deployment_id"


ROLES = CLAIM + "roles"


RESOURCE_LINK = CLAIM + "resource_link"


CONTEXT = CLAIM + "context"


CUSTOM = CLAIM + "custom"


TARGET_LINK_URI = CLAIM + "target_link_uri"


DEEP_LINKING_SETTINGS = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"


AGS_ENDPOINT = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"


NRPS = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"


RESOURCE_LAUNCH = "LtiResourceLinkRequest"


DEEP_LINK_LAUNCH = "LtiDeepLinkingRequest"


#: Signature algorithms accepted for an id_token (LTI 1.3 requires RS256; RS384/512 are the
#: same scheme with a longer hash).
ALGORITHMS = ("RS256", "RS384", "RS512")


#: Clock skew tolerated on ``exp`` and ``iat`` (seconds).
LEEWAY = 60


#: How long a nonce and the login's state parameters are kept (seconds): a launch must arrive
#: within this time of its login (the state cookie lives 5 minutes, pylti1p3's choice).
NONCE_LIFETIME = 600


#: How long a launch's data stays readable (the deep-linking page reads it back), seconds.
LAUNCH_LIFETIME = 2 * 3600


#: How long a platform's JWKS is trusted before it is fetched again (seconds).
JWKS_LIFETIME = 3600


#: Custom parameters of a link naming what it opens (set by the tool's deep-linking answer).
CUSTOM_QUIZ = "quizapp_quiz"


CUSTOM_EXERCISE = "quizapp_exercise"


#: The form field marking the tool's own re-post of a launch (see ``quizapp.web.lti``).
RELAUNCH_FIELD = "quizapp_relaunch"


class LaunchRefused(Exception):
    """A login or launch the tool refuses: ``message`` (what is wrong and what to do) and the
    HTTP ``status`` of the answer."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


__all__ = [
    "DEEP_LINK_LAUNCH",
    "RELAUNCH_FIELD",
    "RESOURCE_LAUNCH",
    "LaunchRefused",
]
