"""The conformance features, run against ``--target`` (default: the embedded reference)."""

from pytest_bdd import scenarios

from harness.certify.engine import FEATURE_FILES, FEATURES

# Absolute paths: the same scenarios whatever the rootdir or ini file pytest picked.
scenarios(*(str(FEATURES / name) for name in FEATURE_FILES))
