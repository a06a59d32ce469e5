"""A mock site's address as the benchmark builds it: `<site>.<WEBSITE_HOST_SUFFIX>`, HTTPS first
and HTTP when HTTPS does not answer (the public sources describe upstream's builder this way).
Reached from the benchmark's own process, so through whatever HTTP(S)_PROXY it was given."""

import os
import time
import urllib.error
import urllib.request

TRIES = []
"""(url, seconds, outcome) of every probe, for the tests to see how fast HTTPS failed."""


def build_website_url(site):
    host = f"{site}.{os.environ['WEBSITE_HOST_SUFFIX']}"
    for scheme in ("https", "http"):
        url = f"{scheme}://{host}"
        started = time.monotonic()
        try:
            urllib.request.urlopen(url + "/", timeout=30).close()
        except urllib.error.HTTPError:
            pass  # it answered: the scheme works
        except OSError as exc:
            TRIES.append((url, time.monotonic() - started, type(exc).__name__))
            continue
        TRIES.append((url, time.monotonic() - started, "answered"))
        return url
    raise OSError(f"{host} answers neither HTTPS nor HTTP")
