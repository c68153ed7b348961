"""Allure: results written by the commands, the pytest-bdd bridge, the offline HTML report."""

#: Where the commands write their Allure results unless told otherwise (``--allure-dir``):
#: here, not in ``allure_results``, so that a command's options need not import Allure.
ALLURE_RESULTS = "reports/allure-results"
