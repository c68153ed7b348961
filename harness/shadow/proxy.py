"""The shadow's proxy: capture's (``harness.capture.proxy.serve``), with a recorder that hands
each exchange to the shadow worker and answers the client at once."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path
from typing import Any

from harness.capture.addon import Recorder
from harness.capture.proxy import (
    CaptureSettings,
    check_listen,
    check_settings,
    event_loop_factory,
    redaction_said,
    serve,
)
from harness.contract.model import Contract
from harness.errors import HarnessError
from harness.shadow.live import HOST as LIVE_HOST
from harness.shadow.setup import HURRY, MirrorOptions, ShadowSetup
from harness.traffic.send import check_reachable

#: Exchanges held in the proxy while the hand-over pipe is full (bytes).
BACKLOG_BYTES = 64 << 20
#: Seconds the proxy gives the worker, past its --timeout and stop grace, to write the
#: reports before it stops it.
DRAIN_MARGIN = 300.0


class ShadowRecorder(Recorder):
    """Capture's recorder with the shadow worker as its writer. The client's answer is not
    held (``hold``): the worker records each exchange once its mirror is done (or not done:
    its line says why), so waiting for the line would make the client wait for the
    candidate."""

    entry = "harness.shadow.worker"
    hold = False
    #: A worker behind (busy, or starved of CPU at its lower priority) must not stall the
    #: clients: up to this much is held here while the pipe is full, then the proxy waits.
    backlog = BACKLOG_BYTES

    def __init__(self, contract: Contract, out: Any, mirror: MirrorOptions) -> None:
        super().__init__(contract, out)
        self.mirror = mirror
        #: The worker's exit status once it is done (0, 1, 2: ``worker``'s statuses).
        self.exit_status: int | None = None

    def extra_header(self) -> dict[str, object]:
        m = self.mirror
        return {"shadow": {"primary": m.primary, "candidate": m.candidate,
                           "secondary": m.secondary}}

    def writer_setup(self, setup) -> ShadowSetup:
        return ShadowSetup(setup, self.mirror)

    def configure(self, updated: set[str]) -> None:
        super().configure(updated)
        if self.writer is not None:  # its hand-over pipe is 1 MiB (writer.PIPE_BYTES)
            # the worker waits for the calls in flight (each within --timeout) before it
            # reports: killing it sooner would lose their lines
            self.writer.drain_timeout = (self.mirror.send.timeout + self.mirror.stop_grace
                                         + DRAIN_MARGIN)

    def close(self) -> None:
        """Stop the worker once it has mirrored, recorded and reported; a second Ctrl-C (or
        SIGTERM) meanwhile tells it to stop waiting for the candidate."""
        writer = self.writer
        if writer is None:
            return super().close()
        worker = writer.proc.pid

        def hurry(signum: int, frame: Any) -> None:
            os.write(2, b"\nharness shadow: stopping at once: not waiting for the candidate "
                        b"any more\n")
            with contextlib.suppress(OSError):
                os.kill(worker, HURRY)

        previous = {sig: signal.signal(sig, hurry) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            super().close()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        self.exit_status = writer.proc.returncode


def run_shadow(settings: CaptureSettings, mirror: MirrorOptions, contract: Contract,
               duration: float | None = None) -> int:
    """Shadow until SIGINT/SIGTERM or ``duration`` seconds; the worker's exit status (0 no
    difference, 1 differences, 2 nothing compared)."""
    check_settings(settings)
    for url in filter(None, (mirror.candidate, mirror.secondary)):
        check_reachable(url, options=mirror.send)
    if mirror.live_port:
        check_listen(LIVE_HOST, mirror.live_port)
    recorder = ShadowRecorder(contract, sys.stdout, mirror)
    asyncio.run(serve(settings, recorder, lambda master: _announce(
        master, settings, mirror, contract, duration, recorder.key_file)),
        loop_factory=event_loop_factory())
    if recorder.failed or recorder.exit_status not in (0, 1, 2):
        raise HarnessError(recorder.failed or f"the shadow worker stopped unexpectedly (exit "
                                              f"status {recorder.exit_status})")
    return recorder.exit_status


async def _announce(master, settings: CaptureSettings, mirror: MirrorOptions,
                    contract: Contract, duration: float | None,
                    recorder_key: Path | None) -> None:
    """Say where we listen once the proxy is up; from then on, ``duration`` seconds."""
    proxyserver = master.addons.get("proxyserver")
    for _ in range(500):
        addrs = proxyserver.listen_addrs()
        if addrs:
            host, port = addrs[0][:2]
            redaction, warning = redaction_said(settings, contract, recorder_key)
            if warning:
                print(warning.replace("capture", "shadow", 1), file=sys.stderr, flush=True)
            also = f" and {mirror.secondary} (noise)" if mirror.secondary else ""
            print(f"harness shadow: listening on http://{host}:{port} in front of "
                  f"{settings.upstream}; mirroring to {mirror.candidate}{also}; recording both "
                  f"answers to {settings.out} ({redaction}); Ctrl-C stops and reports",
                  file=sys.stderr, flush=True)
            if duration is not None:
                asyncio.get_running_loop().call_later(duration, master.shutdown)
            return
        await asyncio.sleep(0.01)
    print("harness shadow: error: the proxy did not start listening", file=sys.stderr,
          flush=True)
    master.shutdown()
