"""The package list, which pyproject.toml cannot say: ``harness`` and its subpackages as found,
plus the features and steps, kept at the top of the repository (``features/``, ``steps/``: a QA
lead reads the rules and the vocabulary there) and mapped into the package by the build as
``harness.certify.features`` and ``harness.certify.steps``. One source, nothing copied; an
editable install maps them the same way. Everything else is in pyproject.toml."""

from setuptools import find_namespace_packages, setup

MAPPED = {"harness.certify.features": "features", "harness.certify.steps": "steps"}

setup(packages=[*find_namespace_packages(include=["harness", "harness.*"]), *MAPPED],
      package_dir=MAPPED)
