"""quizapp: an autograded exercise platform for linear algebra and the attention mechanism.

Layers (imports point down only): ``web`` -> ``services`` -> ``models`` + ``bank`` + ``grading``
-> ``linalg``.  ``grading``, ``bank`` and ``linalg`` are pure: no Flask, no database.
"""

__version__ = "0.2.0"
