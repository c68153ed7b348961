"""``harness shadow``: live traffic answered by the primary, mirrored to a candidate (and a
secondary, for noise), compared as it flows with diff's judgement, both answers recorded.

Two processes, as capture has:

- the proxy (``proxy.py``): capture's mitmproxy, its addons and its address rewriting, with
  ``ShadowRecorder`` (capture's ``Recorder``) handing each finished exchange over a pipe and
  releasing the client's answer at once: the mirror never holds it;
- the worker (``worker.py``), a child process in place of capture's recording writer: it
  classifies each exchange as capture's writer does, decides whether it is mirrored
  (``choice.py``), queues it (bounded: what does not fit is counted and named), sends it to
  the candidate and secondary from a few threads and compares the answers with
  ``harness.diff.Diff`` (the same comparison, causes and noise as ``harness diff``), writes
  the recording line with both answers (capture's writer, capture's redaction), keeps the
  live tally (``tally.py``) that the progress line and the live view (``live.py``) show, and
  writes the final report (console, JSON, JUnit, Allure) when the proxy stops.

A CPU-heavy mirror on the proxy's event loop (or in a thread of its process, under the same
GIL) would delay every client; in its own process it costs the clients only the hand-over.
"""
