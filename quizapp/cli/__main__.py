"""Allow ``python -m quizapp.cli``."""

from quizapp.cli import main

main()
