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
    ("DATABASE_URL", "mysql://u:p@h/db"),  # driver not installed
    ("QUIZAPP_LIMIT_LOGIN_FAILURES", "0 per minute"),  # would lock everyone out
    ("QUIZAPP_RATELIMIT", "enabled"),  # a typo must not turn the limits off
    ("QUIZAPP_REGISTRATION", "enabled"),
    ("QUIZAPP_HTTPS", "2"),
    ("QUIZAPP_STUDENT_LEADERBOARD", "maybe"),
    ("QUIZAPP_TRUSTED_HOSTS", ",,"),  # would mean any host
    ("QUIZAPP_RATELIMIT_STORAGE_URI", "banana://x"),
    ("QUIZAPP_INSTANCE", "/proc/no/such/folder"),
]


@pytest.mark.parametrize("setting,value", BAD, ids=[f"{k}={v}" for k, v in BAD])
def test_bad_setting_is_one_line_naming_it(
    setting: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUIZAPP_INSTANCE", str(tmp_path / "instance"))
    monkeypatch.setenv(setting, value)
    if setting == "QUIZAPP_RATELIMIT_STORAGE_URI":
        monkeypatch.delenv("QUIZAPP_RATELIMIT_STORAGE", raising=False)
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
        ("QUIZAPP_RATELIMIT", "OFF"),
        ("QUIZAPP_REGISTRATION", " no "),
        ("QUIZAPP_HTTPS", "Yes"),
        ("QUIZAPP_TRUSTED_HOSTS", "quiz.example.org, localhost"),
        ("QUIZAPP_RATELIMIT_STORAGE_URI", "memory://"),
    ],
)
def test_good_settings_are_accepted(
    setting: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUIZAPP_INSTANCE", str(tmp_path / "instance"))
    monkeypatch.setenv(setting, value)
    create_app()  # does not raise


@pytest.mark.parametrize(
    "setting,value,expected",
    [
        ("QUIZAPP_RATELIMIT", "off", ("RATELIMIT_ENABLED", False)),
        ("QUIZAPP_RATELIMIT", "", ("RATELIMIT_ENABLED", True)),
        ("QUIZAPP_REGISTRATION", "0", ("QUIZAPP_REGISTRATION", False)),
        ("QUIZAPP_HTTPS", "on", ("SESSION_COOKIE_SECURE", True)),
        ("QUIZAPP_HTTPS", "false", ("SESSION_COOKIE_SECURE", False)),
    ],
)
def test_flags_read_both_ways(
    setting: str, value: str, expected: tuple[str, bool], tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("QUIZAPP_INSTANCE", str(tmp_path / "instance"))
    monkeypatch.setenv(setting, value)
    key, want = expected
    assert create_app().config[key] is want


@pytest.mark.parametrize(
    "url",
    ["postgresql+psycopg://u:secretpw@127.0.0.1:1/x", "sqlite:////nonexistent/dir/x.sqlite"],
)
def test_unreachable_database_is_one_line_without_the_password(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUIZAPP_INSTANCE", str(tmp_path / "instance"))
    monkeypatch.setenv("DATABASE_URL", url)
    result = CliRunner().invoke(main, ["db", "upgrade"])
    assert result.exit_code == 1, result.output
    assert result.output.startswith("Error: database: cannot use "), result.output
    assert "secretpw" not in result.output and "Traceback" not in result.output


def test_database_without_tables_says_to_upgrade(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUIZAPP_INSTANCE", str(tmp_path / "instance"))
    result = CliRunner().invoke(main, ["export-grades", "-o", str(tmp_path / "g.csv")])
    assert result.exit_code == 1, result.output
    assert "quizapp db upgrade" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("command", ["export-grades", "export-roster"])
def test_unwritable_output_is_one_line(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUIZAPP_INSTANCE", str(tmp_path / "instance"))
    assert CliRunner().invoke(main, ["db", "upgrade"]).exit_code == 0
    target = tmp_path / "no" / "such" / "folder" / "out.csv"
    result = CliRunner().invoke(main, [command, "-o", str(target)])
    assert result.exit_code == 1, result.output
    assert result.output.startswith(f"Error: cannot write {target}"), result.output
