"""The regrade summary lists what really changed (status, score or named mistakes) and how many
re-run submissions stayed the same."""

from __future__ import annotations

from quizapp.instructor.regrade import RegradeSummary, SubmissionChange


def _summary() -> RegradeSummary:
    return RegradeSummary(
        exercise_id="q/e",
        version_hash="abcdef0123456789",
        dry_run=False,
        regraded=7,
        changes=[
            SubmissionChange(1, 10, "ana", 1, "incorrect", "correct", 0.0, 1.0, [], []),
            SubmissionChange(
                2, 11, "ben", 1, "incorrect", "incorrect", 0.0, 0.0, [], ["swapped_unknowns"]
            ),
        ],
    )


def test_text_counts_unchanged_and_names_mistake_only_changes() -> None:
    text = _summary().text()
    assert "changed 2 verdicts (unchanged: 5)" in text
    lines = text.splitlines()
    assert lines[1].endswith("incorrect 0 -> correct 1")
    # A change of the named mistakes alone is said as such, not as "incorrect 0 -> incorrect 0".
    assert lines[2].endswith("mistakes none -> swapped_unknowns (incorrect 0)")
    assert "incorrect 0 -> incorrect 0" not in text


def test_summary_round_trips_and_reads_old_rows() -> None:
    s = _summary()
    assert RegradeSummary.from_dict(s.to_dict()).text() == s.text()
    old = s.to_dict()
    for c in old["changes"]:  # rows stored before mistakes were recorded
        del c["old_mistakes"], c["new_mistakes"]
    assert RegradeSummary.from_dict(old).changed == 2
