"""Performance benchmarks of issue 7 (not tests): ``python benchmarks/run.py`` runs them all."""
