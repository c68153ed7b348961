"""The conformance features, run against ``--target`` (default: the embedded reference)."""

from pytest_bdd import scenarios

from harness.certify import FEATURE_FILES

scenarios(*FEATURE_FILES)
