"""``services.retry_conflicts``: a transaction PostgreSQL aborted (serialization failure, deadlock)
runs again; anything else does not; what is left after the retries is a 503, never a 500.

The real conflict (one student's concurrent submits on PostgreSQL) is in tests/test_hardening.py
(``test_ten_concurrent_submits_of_one_student_to_ten_exercises``).
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.exc import OperationalError, ProgrammingError

from quizapp.services import transactions
from quizapp.services.transactions import is_conflict, retry_conflicts


class Sqlstate(Exception):
    def __init__(self, sqlstate: str) -> None:
        super().__init__(f"SQLSTATE {sqlstate}")
        self.sqlstate = sqlstate


def db_error(sqlstate: str, cls: type = OperationalError) -> Exception:
    return cls("UPDATE ...", {}, Sqlstate(sqlstate))


class FakeSession:
    def __init__(self) -> None:
        self.rollbacks = 0

    def rollback(self) -> None:
        self.rollbacks += 1


@pytest.fixture(autouse=True)
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transactions.time, "sleep", lambda s: None)


def flaky(failures: list[Exception], result: Any = "done") -> Any:
    calls: list[int] = []

    @retry_conflicts
    def service(session: Any, value: int) -> Any:
        calls.append(value)
        if failures:
            raise failures.pop(0)
        return result

    return service, calls


@pytest.mark.parametrize("sqlstate", ["40001", "40P01"])
def test_a_conflict_is_rolled_back_and_run_again(sqlstate: str) -> None:
    session = FakeSession()
    service, calls = flaky([db_error(sqlstate), db_error(sqlstate)])
    assert service(session, 7) == "done"
    assert calls == [7, 7, 7] and session.rollbacks == 2


def test_other_errors_are_not_retried() -> None:
    session = FakeSession()
    service, calls = flaky([db_error("23505", ProgrammingError)])  # unique violation
    with pytest.raises(ProgrammingError):
        service(session, 1)
    assert calls == [1] and session.rollbacks == 0
    service, calls = flaky([ValueError("a bug")])
    with pytest.raises(ValueError):
        service(session, 1)
    assert calls == [1]


def test_the_last_conflict_is_raised_after_every_attempt() -> None:
    session = FakeSession()
    service, calls = flaky([db_error("40P01") for _ in range(10)])
    with pytest.raises(OperationalError) as err:
        service(session, 3)
    assert is_conflict(err.value)
    assert len(calls) == transactions.RETRY_ATTEMPTS
    assert session.rollbacks == transactions.RETRY_ATTEMPTS - 1


def test_a_decorated_service_inside_another_is_retried_by_the_outer_one_only() -> None:
    session = FakeSession()
    inner_calls: list[int] = []
    failures = [db_error("40001")]

    @retry_conflicts
    def inner(session: Any) -> None:
        inner_calls.append(1)
        if failures:
            raise failures.pop(0)

    @retry_conflicts
    def outer(session: Any) -> str:
        inner(session)
        return "ok"

    assert outer(session) == "ok"
    assert len(inner_calls) == 2 and session.rollbacks == 1


def test_a_conflict_left_after_the_retries_is_a_503_page_not_a_500(tmp_path: Any) -> None:
    from test_web_support import make_app

    app = make_app(tmp_path)

    @app.route("/conflict")
    def conflict() -> str:
        raise db_error("40P01")

    resp = app.test_client().get("/conflict")
    assert resp.status_code == 503, resp.status_code
    assert "nothing was stored" in resp.get_data(as_text=True)
