"""``harness probe``: robustness and security checks of a deployment.

cases.py (what a probe case is, and the canary), attacks.py (XML attacks and malformed envelopes,
as data), http_level.py (HTTP-level cases), values.py (invalid and boundary values generated with
Hypothesis from the contract's types), checks.py (the rules SEC-* and ROB-*, plain named
functions), casefile.py (failing cases saved and read back), runner.py (the budget, sending,
the plain call after each hostile one, the report).
"""
