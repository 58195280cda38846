"""A bad setting stops the app at start-up with one line naming the setting (never a traceback,
never a failure later on a request)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from quizapp.cli import main
from quizapp.config import ConfigError
from quizapp.web import create_app

BAD = [
    ("QUIZAPP_SQLITE_SYNCHRONOUS", "bogus"),
    ("QUIZAPP_SQLITE_SYNCHRONOUS", "OFF"),
    ("QUIZAPP_PROXY_FIX", "abc"),
    ("QUIZAPP_PROXY_FIX", "11"),
    ("DATABASE_URL", "foo://nowhere"),
    ("DATABASE_URL", "not a url"),
    ("QUIZAPP_LIMIT_LOGIN", "banana"),
    ("QUIZAPP_LIMIT_SUBMIT", "30 per fortnight"),
    ("QUIZAPP_LIMIT_LOGIN_FAILURES", "-"),
    ("QUIZAPP_MAX_CONTENT_LENGTH", "big"),
    ("QUIZAPP_MAX_CONTENT_LENGTH", "12"),
]


@pytest.mark.parametrize("setting,value", BAD, ids=[f"{k}={v}" for k, v in BAD])
def test_bad_setting_is_one_line_naming_it(
    setting: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUIZAPP_INSTANCE", str(tmp_path / "instance"))
    monkeypatch.setenv(setting, value)
    with pytest.raises(ConfigError, match=setting):
        create_app()
    result = CliRunner().invoke(main, ["sync"])
    assert result.exit_code == 1, result.output
    assert result.output.startswith(f"Error: configuration: {setting}"), result.output
    assert "Traceback" not in result.output and len(result.output.splitlines()) == 1


@pytest.mark.parametrize(
    "setting,value",
    [
        ("QUIZAPP_LIMIT_LOGIN", "3/minute"),
        ("QUIZAPP_LIMIT_LOGIN_FAILURES", "10 per 15 minutes; 100 per day"),
        ("QUIZAPP_SQLITE_SYNCHRONOUS", " full "),
        ("QUIZAPP_MAX_CONTENT_LENGTH", "1048576"),
        ("QUIZAPP_PROXY_FIX", "2"),
    ],
)
def test_good_settings_are_accepted(
    setting: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUIZAPP_INSTANCE", str(tmp_path / "instance"))
    monkeypatch.setenv(setting, value)
    create_app()  # does not raise
