"""The tool's configuration as the LMS needs it: its URLs, the scopes it asks for, and the
Canvas JSON configuration (what ``quizapp lti config`` prints and ``/lti/config.json`` serves).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from quizapp.lti.grades import AGS_SCOPES
from quizapp.lti.roster import NRPS_SCOPE

#: Every scope the tool asks for: the four AGS scopes and the NRPS one.
SCOPES = (*AGS_SCOPES, NRPS_SCOPE)


def tool_urls(base: str) -> dict[str, str]:
    """The tool's URLs under ``base`` (where users reach the app, e.g.
    ``https://quiz.example.edu``): ``login`` (OIDC login initiation), ``launch`` (the
    redirect URI and target link URI), ``deep_link`` (content selection; the same endpoint),
    ``jwks`` (the public keys), ``config`` (the Canvas JSON configuration)."""
    base = base.rstrip("/")
    return {
        "login": base + "/lti/login",
        "launch": base + "/lti/launch",
        "deep_link": base + "/lti/launch",
        "jwks": base + "/lti/jwks",
        "config": base + "/lti/config.json",
    }


def canvas_config(urls: dict[str, str], title: str = "quizapp") -> dict[str, Any]:
    """The tool configuration in Canvas's JSON format (an LTI developer key's "Paste JSON" or
    "Enter URL"): URLs, scopes, and the placements that use deep linking (assignment and link
    selection), so that links come with their grade column."""
    placements = [
        {
            "placement": name,
            "message_type": "LtiDeepLinkingRequest",
            "target_link_uri": urls["deep_link"],
        }
        for name in ("assignment_selection", "link_selection")
    ]
    return {
        "title": title,
        "description": "Autograded linear-algebra and attention exercises.",
        "oidc_initiation_url": urls["login"],
        "target_link_uri": urls["launch"],
        "public_jwk_url": urls["jwks"],
        "scopes": list(SCOPES),
        "extensions": [
            {
                "platform": "canvas.instructure.com",
                "privacy_level": "public",
                "domain": urlsplit(urls["launch"]).netloc,
                "settings": {"placements": placements},
            }
        ],
        "custom_fields": {},
    }


def config_text(urls: dict[str, str]) -> str:
    """The configuration as the lines ``quizapp lti config`` prints."""
    lines = [
        "Tool configuration (paste into the LMS):",
        f"  OpenID Connect login URL (initiate login): {urls['login']}",
        f"  Redirect URI and target link URI (launch): {urls['launch']}",
        f"  Deep linking URL (content selection):      {urls['deep_link']}",
        f"  Public JWK set URL (public keyset):        {urls['jwks']}",
        f"  Canvas JSON configuration URL:             {urls['config']}",
        "  Scopes:",
        *(f"    {scope}" for scope in SCOPES),
    ]
    return "\n".join(lines)


__all__ = ["SCOPES", "canvas_config", "config_text", "tool_urls"]
