"""Signals (blinker, which Flask ships) the use cases send so that other packages can react
without the use cases importing them: imports keep pointing down.

- :data:`score_changed`: sent by ``quizapp.services.submit`` after it committed a graded attempt
  on a student's graded variant (the student's points on the exercise may have changed).
  Keyword arguments: ``user_id`` (int), ``exercise_id`` (str), ``quiz_id`` (str).  The sender is
  the SQLAlchemy session the submit used.  Receivers run in the caller's thread, after the
  commit; an exception in a receiver propagates to the caller, so receivers must catch their
  own errors (``quizapp.lti`` does: a failure to queue a grade never fails a submit).
"""

from __future__ import annotations

from blinker import Namespace

_signals = Namespace()

#: A graded attempt changed (or may have changed) a student's standing on an exercise.
score_changed = _signals.signal("score-changed")

__all__ = ["score_changed"]
