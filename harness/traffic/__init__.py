"""Recorded and sent traffic: exchanges, recordings, HAR, redaction and the sending path.

The transport and recording layer: it never imports the judge package (the judges build
findings on its exchanges; ``tests/test_layering.py`` keeps it so)."""
