"""Functional scenarios: what the step vocabulary (``steps/scenario_steps.py``) does with a
QA team's own Gherkin (calls with given values, answers read by path, checks, saved values),
the check of such features before a run (``lint``), and features written from recordings
(``record``)."""
