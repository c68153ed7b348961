"""Judging traffic: the rules catalogue, findings and reports, the response comparison, the
sending rules, lint and the streaming engine under lint and replay."""
