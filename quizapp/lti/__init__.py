"""The LMS connection: LTI 1.3 with the Advantage services (Canvas, Moodle, ...).

The tool side of the protocol is pylti1p3 (the most used Python LTI 1.3 tool library: OIDC
login, id_token checks, deep linking, the AGS and NRPS clients); this package wraps it where a
deployment of several hosts needs more than the library does: everything it stores lives in the
database (keys, nonces, registrations), nonces are single-use, every HTTP call has a timeout,
grades go through a queue, and every refusal says what to do.  Pure of Flask like
``quizapp.services``; the routes are in ``quizapp.web.lti``, the commands in
``quizapp.cli.lti``.

Modules:

- ``models``: the tables (``lti_*``);
- ``keys``: the tool's key pair (``/lti/jwks``);
- ``registry``: registrations and deployments (``quizapp lti register / list / remove``);
- ``launch``: OIDC login, launch validation, accounts, deep linking;
- ``accounts``: platform users as quizapp accounts (roles, usernames);
- ``scores``: the score sent to the LMS (one function, ``lms_score``);
- ``grades``: the grade queue, line items, sending, failures explained;
- ``roster``: roster sync (NRPS);
- ``http``: timeouts and the token cache;
- ``worker``: the background sender.
"""

from __future__ import annotations

from quizapp.lti.scores import LmsScore, lms_score, resource_id

__all__ = ["LmsScore", "lms_score", "resource_id"]
