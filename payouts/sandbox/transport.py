"""The loopback transport to the test-mode bank (the sandbox bank); it can lose an answer on purpose."""

import httpx

from verification.providers.loopback import LoopbackTransport

LOST_ANSWER_HEADER = "X-Sandbox-Answer-Lost"


class TestModeBankTransport(LoopbackTransport):
    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        # The bank acted on the request, but its answer never reaches us: a real network timeout.
        if response.headers.get(LOST_ANSWER_HEADER):
            raise httpx.ReadTimeout("sandbox bank: answer lost", request=request)
        return response
