"""``replay --rate R``: the rate a target actually sees, at R = 2, 8, 50, 200.

A loopback HTTP server in this process notes when each request arrives (and answers an empty
200 after ``--delay`` ms); replay sends a varied recording (bench/varied.py) of about
``--seconds`` worth of requests at each rate, with the default layout (``--concurrency``
spread over one process per core). Achieved rate = (requests - 1) / (last - first arrival).

    .venv/bin/python bench/bench_pacing.py                       # rates 2 8 50 200, 4 s each
    .venv/bin/python bench/bench_pacing.py --rates 8 50 --concurrency 1 --delay 20

Target: every rate within 5% of the asked one.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from varied import write_varied

from harness.contract.model import school_mobile
from harness.replay import Layout, replay

TOLERANCE = 0.05


class Arrivals(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, delay: float) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.delay = delay
        self.times: list[float] = []
        self.lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Arrivals

    def _answer(self) -> None:
        with self.server.lock:
            self.server.times.append(time.monotonic())
        if length := int(self.headers.get("Content-Length") or 0):
            self.rfile.read(length)
        if self.server.delay:
            time.sleep(self.server.delay)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rates", type=float, nargs="+", default=[2, 8, 50, 200])
    parser.add_argument("--seconds", type=float, default=4.0, help="run length per rate")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--delay", type=float, default=0.0, help="server answer time, ms")
    args = parser.parse_args()
    contract = school_mobile()
    server = Arrivals(args.delay / 1000)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    layout = Layout.for_concurrency(args.concurrency)
    print(f"concurrency {args.concurrency} = {layout.processes} processes x {layout.threads} "
          f"threads; server answers after {args.delay:g} ms; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'asked/s':>8} {'requests':>9} {'achieved/s':>11} {'error':>7}  verdict")
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for rate in args.rates:
            count = max(8, round(rate * args.seconds) + 1)
            path = write_varied(Path(tmp) / f"varied-{count}.jsonl", contract, count)
            server.times.clear()
            replay([path], contract, url, concurrency=args.concurrency, rate=rate,
                   check=False)
            times = sorted(server.times)
            got = (len(times) - 1) / (times[-1] - times[0])
            error = got / rate - 1
            worst = max(worst, abs(error))
            print(f"{rate:>8g} {len(times):>9} {got:>11.2f} {error:>+7.1%}  "
                  f"{'ok' if abs(error) <= TOLERANCE else 'OFF'}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"worst error {worst:.1%} (target <= {TOLERANCE:.0%})")
    server.shutdown()
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
