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
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

from arrivals import achieved, listening  # noqa: E402
from varied import write_varied  # noqa: E402

from harness.contract.model import school_mobile  # noqa: E402
from harness.replay import Layout, replay  # noqa: E402

TOLERANCE = 0.05


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rates", type=float, nargs="+", default=[2, 8, 50, 200])
    parser.add_argument("--seconds", type=float, default=4.0, help="run length per rate")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--delay", type=float, default=0.0, help="server answer time, ms")
    args = parser.parse_args()
    contract = school_mobile()
    layout = Layout.for_concurrency(args.concurrency)
    print(f"concurrency {args.concurrency} = {layout.processes} processes x {layout.threads} "
          f"threads; server answers after {args.delay:g} ms; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'asked/s':>8} {'requests':>9} {'achieved/s':>11} {'error':>7}  verdict")
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp, listening(args.delay / 1000) as server:
        for rate in args.rates:
            count = max(8, round(rate * args.seconds) + 1)
            path = write_varied(Path(tmp) / f"varied-{count}.jsonl", contract, count)
            server.times.clear()
            replay([path], contract, server.url, concurrency=args.concurrency, rate=rate,
                   check=False)
            got = achieved(server.times)
            error = got / rate - 1
            worst = max(worst, abs(error))
            print(f"{rate:>8g} {len(server.times):>9} {got:>11.2f} {error:>+7.1%}  "
                  f"{'ok' if abs(error) <= TOLERANCE else 'OFF'}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"worst error {worst:.1%} (target <= {TOLERANCE:.0%})")
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
