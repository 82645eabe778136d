"""Reads one piece of work makes once (a page that asks of many rules, a payout batch that asks of
many brands): inside `with reads.kept():` a `Remembered` keeps the answers its callers put in
`reads.answers()`; outside, `answers()` is None and every call reads afresh. Only for reads: a write
reads again inside its own transaction."""

from contextlib import contextmanager
from contextvars import ContextVar


class Remembered:
    def __init__(self, name: str):
        self._answers: ContextVar[dict | None] = ContextVar(name, default=None)

    @contextmanager
    def kept(self):
        token = self._answers.set({})
        try:
            yield
        finally:
            self._answers.reset(token)

    def answers(self) -> dict | None:
        return self._answers.get()
