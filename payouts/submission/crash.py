"""Crash points: the tests stop a payout at each step as a killed process would, then restart."""

_crash_at: set[str] = set()


class SimulatedCrash(BaseException):
    """Not an Exception: no handler in the code may swallow it, as none could swallow a kill."""


def crash_point(name: str) -> None:
    if name in _crash_at:
        _crash_at.discard(name)
        raise SimulatedCrash(name)
