"""Certify: the conformance features (Gherkin), their step glue and the engine that runs them."""
