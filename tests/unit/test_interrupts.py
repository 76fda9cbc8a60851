"""SIGTERM unwinds like Ctrl-C, and the exit code says which signal came."""

from __future__ import annotations

import os
import signal

import pytest

from nexmark import interrupts


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_stop_signal_raises_keyboard_interrupt_and_is_noted(signum, code):
    before = {s: signal.getsignal(s) for s in interrupts.STOP_SIGNALS}
    with pytest.raises(KeyboardInterrupt), interrupts.noted() as interrupted:
        assert not interrupted()
        os.kill(os.getpid(), signum)  # Python runs the handler before the next line
        pytest.fail("the signal did not interrupt the block")
    assert interrupts.exit_code() == code
    assert {s: signal.getsignal(s) for s in interrupts.STOP_SIGNALS} == before  # restored


def test_an_interrupt_swallowed_by_a_library_is_still_seen():
    with interrupts.noted() as interrupted:
        try:  # what py4j's finalizers do: catch it and go on
            os.kill(os.getpid(), signal.SIGTERM)
            pytest.fail("the signal did not interrupt the block")
        except KeyboardInterrupt:
            pass
    assert interrupted()
