"""The conformance features, run against ``--target`` (default: the embedded reference).

certify writes the features of its contract into a folder and names it in HARNESS_FEATURES_DIR;
a plain ``pytest`` run loads the shipped School Mobile features."""

import os
from pathlib import Path

from pytest_bdd import scenarios

from harness.certify.engine import FEATURE_FILES, FEATURES, FEATURES_ENV
from harness.certify.generate import WSDL_FEATURE

_written = os.environ.get(FEATURES_ENV)
# Absolute paths: the same scenarios whatever the rootdir or ini file pytest picked.
if _written:
    scenarios(*sorted(str(p) for p in Path(_written).glob("*.feature")))
else:
    scenarios(*(str(FEATURES / name) for name in (*FEATURE_FILES, WSDL_FEATURE)))
