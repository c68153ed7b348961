"""The sending path's defaults, apart from the HTTP client: every command's options show them
in --help, and importing httpx for that would slow every command's start (~0.4 s)."""

#: Seconds a request may take in all: connect, TLS, headers and the whole body.
DEFAULT_TIMEOUT = 30.0
#: Default response cap: SOAP answers of this service are kilobytes; ASP.NET's own request
#: limit is 4 MB. Small enough that 8 requests in flight stay far under 300 MB.
DEFAULT_MAX_RESPONSE_MB = 16.0
#: Requests in a row without an answer after which a run stops.
DEFAULT_MAX_FAILURES = 3
#: The sending rules' IDs: a response over the cap, a request without an answer (their
#: findings and titles: judge/sending.py).
RESPONSE_SIZE_RULE = "SEND-RESPONSE-SIZE"
TRANSPORT_RULE = "SEND-TRANSPORT"
