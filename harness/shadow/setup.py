"""What the shadow worker is handed first: capture's writer setup and the mirror's options."""

from __future__ import annotations

import signal
from dataclasses import dataclass, field

from harness.capture.writer import WriterSetup
from harness.judge.profiles import Profile
from harness.traffic.send import SendOptions

#: Calls waiting for their turn to be mirrored (``--queue``).
DEFAULT_QUEUE = 1000
#: Seconds the worker goes on mirroring the calls still queued or in flight once the proxy
#: stops; then what is left is counted as not compared.
STOP_GRACE = 10.0
#: What the proxy sends the worker on a second Ctrl-C (or SIGTERM) while it stops: stop
#: waiting for the candidate.
HURRY = signal.SIGUSR1


@dataclass
class MirrorOptions:
    """The mirror's settings (``harness shadow``'s flags)."""

    primary: str
    candidate: str
    secondary: str | None = None
    ignore: tuple[str, ...] = ()
    ignore_values: tuple[str, ...] = ()
    send: SendOptions = field(default_factory=SendOptions)
    #: The roles sent with settings of their own (``--candidate env:NAME``).
    role_send: dict[str, SendOptions] = field(default_factory=dict)
    #: Requests in flight to the candidate (and secondary) at once.
    jobs: int = 8
    queue: int = DEFAULT_QUEUE
    #: Only these operations are mirrored (empty: all); these never are.
    mirror_operations: frozenset[str] = frozenset()
    skip_operations: frozenset[str] = frozenset()
    profile: Profile | None = None
    json: str | None = None
    junit: str | None = None
    allure_dir: str | None = None
    #: The live view's port on 127.0.0.1 (0: a free one; None: no live view) and its token.
    live_port: int | None = None
    live_token: str = ""
    quiet: bool = False
    stop_grace: float = STOP_GRACE
    #: The run's secrets (-H and config header values, passwords) and credential header names
    #: (``harness.traffic.redaction.given_secrets``): the worker shows them by pseudonyms.
    given: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())


@dataclass
class ShadowSetup:
    writer: WriterSetup
    mirror: MirrorOptions
