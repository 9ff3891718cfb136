"""The load test reads each service's /metrics again when a read fails (a service busy under the load,
or the machine under a test suite's, may miss one): one missed read lost the report's server-side
figures of the dealer in a CI run of the smoke test (2026-12-07)."""

from __future__ import annotations

import http.server
import threading
import urllib.error
from collections.abc import Iterator

import pytest

from cardroom.client.loadtest.services import scrape

PAGE = b"# TYPE dealer_hands_dealt_total counter\ndealer_hands_dealt_total 7.0\n"


class _Flaky(http.server.BaseHTTPRequestHandler):
    """Answers 503 to the first ``failures`` reads, then the page."""

    failures = 0
    reads = 0

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        type(self).reads += 1
        if type(self).reads <= type(self).failures:
            self.send_error(503, "busy")
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def flaky() -> Iterator[type[_Flaky]]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    _Flaky.reads, _Flaky.failures = 0, 0
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Flaky.url = f"http://127.0.0.1:{server.server_address[1]}/metrics"  # type: ignore[attr-defined]
    try:
        yield _Flaky
    finally:
        server.shutdown()
        server.server_close()


def test_a_failed_read_is_made_again_and_the_page_is_read(flaky: type[_Flaky]) -> None:
    flaky.failures = 2
    values = scrape(flaky.url, timeout=2.0, tries=3, retry_seconds=0.01)  # type: ignore[attr-defined]
    assert values["dealer_hands_dealt_total"] == 7.0 and flaky.reads == 3


def test_the_last_failure_is_raised_when_every_read_fails(flaky: type[_Flaky]) -> None:
    flaky.failures = 5
    with pytest.raises(urllib.error.HTTPError):
        scrape(flaky.url, timeout=2.0, tries=2, retry_seconds=0.01)  # type: ignore[attr-defined]
    assert flaky.reads == 2
