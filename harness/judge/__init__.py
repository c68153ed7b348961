"""Judging traffic: the rules catalogue, findings and reports, the response comparison, lint."""
