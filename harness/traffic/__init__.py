"""Recorded and sent traffic: exchanges, recordings, HAR, redaction, the sending path,
the streaming engine and replay."""
