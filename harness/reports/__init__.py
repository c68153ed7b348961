"""Allure: results written by the commands, the pytest-bdd bridge, the offline HTML report."""
