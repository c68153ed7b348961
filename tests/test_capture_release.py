"""``Release``, the held answer's signal: its callbacks run in the call that settles it, in
order, whatever one of them raises; mitmproxy's own hook path awaits it like a future."""

from __future__ import annotations

import asyncio
import logging

import pytest

from harness.capture.release import Release


def test_callbacks_run_in_the_call_that_settles_in_the_order_they_came() -> None:
    release, ran = Release(), []
    release.then(lambda: ran.append(1))
    release.then(lambda: ran.append(2))
    assert ran == [] and not release.settled()
    release.settle()
    assert ran == [1, 2] and release.settled() and release.exception is None
    release.then(lambda: ran.append(3))  # already settled: at once
    release.settle(ValueError("twice"))  # settling again changes nothing
    assert ran == [1, 2, 3] and release.exception is None


def test_a_callback_that_raises_is_logged_and_the_others_still_run(caplog) -> None:
    release, ran = Release(), []

    def broken() -> None:
        raise RuntimeError("broken callback")

    release.then(broken)
    release.then(lambda: ran.append("after"))
    with caplog.at_level(logging.ERROR, logger="harness.capture.release"):
        release.settle()
    assert ran == ["after"]
    assert "broken callback" in caplog.text


def test_awaiting_a_release_waits_for_it_and_raises_its_exception() -> None:
    async def main() -> list[str]:
        seen: list[str] = []
        plain, failing = Release(), Release()
        loop = asyncio.get_running_loop()
        loop.call_later(0.01, plain.settle)
        loop.call_later(0.02, failing.settle, LookupError("writer gone"))
        await plain
        seen.append("plain")
        with pytest.raises(LookupError, match="writer gone"):
            await failing
        seen.append("failing")
        await plain  # settled: at once
        return seen

    assert asyncio.run(main()) == ["plain", "failing"]


def test_a_release_of_a_future_carries_its_exception_and_ignores_a_cancel() -> None:
    async def main() -> list[BaseException | None]:
        loop = asyncio.get_running_loop()
        futures = [loop.create_future() for _ in range(3)]
        releases = [Release.of(f) for f in futures]
        futures[0].set_result(1)
        futures[1].set_exception(KeyError("x"))
        futures[2].cancel()
        await asyncio.sleep(0)  # a future's callbacks run a loop iteration later
        assert all(r.settled() for r in releases)
        return [r.exception for r in releases]

    done, failed, cancelled = asyncio.run(main())
    assert done is None and isinstance(failed, KeyError) and cancelled is None
