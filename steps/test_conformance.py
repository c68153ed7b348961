"""The conformance features, run against ``--target`` (default: the embedded reference):
those certify wrote for its contract, the user's (``--features``), or in a plain ``pytest``
run the packaged School Mobile ones."""

from pytest_bdd import scenarios

from harness.certify.engine import feature_files

# Absolute paths: the same scenarios whatever the rootdir or ini file pytest picked.
scenarios(*(str(path) for path in feature_files()))
