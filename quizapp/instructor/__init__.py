"""The instructor's use cases: scoreboard, gradebook (CSV), statistics, regrade, roster, excusals.

Pure of Flask like ``quizapp.services``: every function takes a SQLAlchemy ``Session`` and plain
values, so the ``/instructor`` pages, the ``quizapp`` CLI and the tests share one implementation.
Writes use ``services.begin_write`` (``BEGIN IMMEDIATE`` on SQLite) and commit before returning,
or roll back entirely on error.

Definitions used throughout (the words of ``/work/shared/design.md``):

- a student's **points** on an exercise are ``progress.best_points``
  (``services.deadlines.exercise_points``: the instructor's override if any, else the best
  credited score of variant 1 x the exercise's points); practice variants never count;
- an **excused** exercise (table ``excusals``) counts neither earned nor available points for that
  student, in the scoreboard and in the gradebook;
- only users with the role ``student`` appear in scoreboards, gradebooks and statistics.

Modules: ``course`` (``exercises/course.yaml``), ``scoreboard``, ``gradebook``,
``gradebook_export`` (its tables and CSV), ``excusals``, ``statistics``, ``regrade``,
``students`` (one student's page), ``roster`` (import/export, reset links).  Everything public
is re-exported here.
"""

from __future__ import annotations

from quizapp import services
from quizapp.instructor._scope import all_students, get_quiz, live_exercises, live_quizzes
from quizapp.instructor.course import (
    COURSE_FILE,
    CourseConfig,
    CourseConfigError,
    course_config_warnings,
    load_course_config,
    parse_course_config,
)
from quizapp.instructor.excusals import excuse, excused_exercises, unexcuse
from quizapp.instructor.gradebook import (
    Gradebook,
    GradebookCell,
    GradebookQuiz,
    GradebookRow,
    QuizTotal,
    cell_marker,
    course_percent,
    gradebook,
)
from quizapp.instructor.gradebook_export import (
    EXCUSED,
    FORMULA_TRIGGERS,
    LATE_COLUMN,
    OVERRIDES_COLUMN,
    csv_cell,
    exercise_column,
    gradebook_csv,
    gradebook_parts_table,
    gradebook_table,
    iter_gradebook_csv,
    write_csv,
)
from quizapp.instructor.regrade import (
    ProgressChange,
    RegradeSummary,
    SubmissionChange,
    regrade_exercise,
    regrade_history,
    submission_history,
)
from quizapp.instructor.roster import (
    RESET_LINK_VALID,
    RosterEntry,
    RosterError,
    RosterImport,
    create_reset_link,
    find_reset,
    import_roster,
    parse_roster_csv,
    roster_csv,
    roster_table,
    use_reset,
)
from quizapp.instructor.scoreboard import SCOREBOARD_SORTS, Scoreboard, ScoreboardRow, scoreboard
from quizapp.instructor.statistics import (
    SIZE_PARAMETERS,
    ExerciseStats,
    ParameterBreakdown,
    exercise_statistics,
    normalize_answer_value,
    score_bin,
    score_bin_labels,
    variant_parameters,
)
from quizapp.instructor.students import (
    StudentExercise,
    answer_text,
    student_detail,
)

__all__ = [
    "COURSE_FILE",
    "EXCUSED",
    "FORMULA_TRIGGERS",
    "LATE_COLUMN",
    "OVERRIDES_COLUMN",
    "RESET_LINK_VALID",
    "SCOREBOARD_SORTS",
    "SIZE_PARAMETERS",
    "CourseConfig",
    "CourseConfigError",
    "ExerciseStats",
    "Gradebook",
    "GradebookCell",
    "GradebookQuiz",
    "GradebookRow",
    "ParameterBreakdown",
    "ProgressChange",
    "QuizTotal",
    "RegradeSummary",
    "RosterEntry",
    "RosterError",
    "RosterImport",
    "Scoreboard",
    "ScoreboardRow",
    "StudentExercise",
    "SubmissionChange",
    "all_students",
    "answer_text",
    "cell_marker",
    "course_config_warnings",
    "course_percent",
    "create_reset_link",
    "csv_cell",
    "excuse",
    "excused_exercises",
    "exercise_column",
    "exercise_statistics",
    "find_reset",
    "get_quiz",
    "gradebook",
    "gradebook_csv",
    "gradebook_parts_table",
    "gradebook_table",
    "iter_gradebook_csv",
    "import_roster",
    "live_exercises",
    "live_quizzes",
    "load_course_config",
    "normalize_answer_value",
    "parse_course_config",
    "parse_roster_csv",
    "regrade_exercise",
    "regrade_history",
    "roster_csv",
    "roster_table",
    "score_bin",
    "score_bin_labels",
    "scoreboard",
    "services",
    "student_detail",
    "submission_history",
    "unexcuse",
    "use_reset",
    "variant_parameters",
    "write_csv",
]
