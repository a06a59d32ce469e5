"""OSWorld 2.0's services: a compose stack of mock sites started by StateAct
(`sandboxes/services.py`) as `--osworld2-websites` starts OSWorld-web's, timed and weighed.

The stack is written here in OSWorld-web's layout (a top-level file of `include:`s, a main file
with caddy-docker-proxy, which StateAct replaces by its front proxy, a file per site with Caddy
labels), each site a small HTTP server built FROM the base image (nothing is pulled; the first
start builds them and is not timed, later starts find every layer cached). A start is everything
`suite` does before its first task: the builds (cached), the private network, the site containers,
the front proxy, the probe, every site answering through the front, the host proxy. The plainest
way beside it: the same site containers started with `docker run -d` one after the other, with no
network, front, health check or proxy.
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
import textwrap
import time
from pathlib import Path

from sandboxes.compose import read_compose
from sandboxes.docker_backend import docker_client, resolve_image
from sandboxes.images.build import image_ref
from sandboxes.service_spec import service_image_tag
from sandboxes.services import ServiceStack

from . import Row, row

SITES = 8
RUNS = 3
SUFFIX = "bench.test"
SITE_SERVER = """
import http.server, sys
class Site(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"ok"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("", 3000), Site).serve_forever()
"""
MiB = 1 << 20


def write_stack(root: Path, sites: int) -> Path:
    """OSWorld-web's layout with `sites` one-container sites; returns the top-level file."""
    includes = ["./docker-compose.main.yml"]
    for n in range(sites):
        site = root / f"site{n}_web"
        site.mkdir(parents=True)
        (site / "site.py").write_text(SITE_SERVER)
        (site / "Dockerfile").write_text(
            f"FROM {image_ref('base')}\nCOPY site.py /srv/site.py\nUSER nobody\n"
            'CMD ["python3", "/srv/site.py"]\n'
        )
        (site / "web-compose.yml").write_text(
            textwrap.dedent(
                f"""
                services:
                  site{n}_web:
                    build: {{context: .}}
                    networks: [web]
                    labels:
                      caddy: "site{n}.${{HOST_SUFFIX:-localhost}}"
                      caddy.reverse_proxy: "{{{{upstreams 3000}}}}"
                """
            )
        )
        includes.append(f"./site{n}_web/web-compose.yml")
    (root / "docker-compose.main.yml").write_text(
        "services:\n  caddy:\n    image: lucaslorentz/caddy-docker-proxy:2.8-alpine\n"
        '    ports: ["80:80"]\n    networks: [web]\n'
        "    volumes: [/var/run/docker.sock:/var/run/docker.sock]\nnetworks:\n  web:\n"
    )
    top = root / "docker-compose.yml"
    top.write_text("include:\n" + "".join(f"  - {path}\n" for path in includes))
    return top


def rows(sites: int = SITES, runs: int = RUNS) -> list[Row]:
    client = docker_client()
    probe = resolve_image(client, "base")
    with tempfile.TemporaryDirectory(prefix="stateact-services-bench-") as folder:
        plan = read_compose(write_stack(Path(folder), sites), {"HOST_SUFFIX": SUFFIX})
        with ServiceStack.of(plan, probe):  # builds the sites' images (not timed)
            pass
        starts, closes, memory = [], [], {}
        for _ in range(runs):
            started = time.perf_counter()
            stack = ServiceStack.of(plan, probe).start()
            starts.append(time.perf_counter() - started)
            memory = {name: _memory_mib(c) for name, c in stack.containers.items()}
            started = time.perf_counter()
            stack.close()
            closes.append(time.perf_counter() - started)
        images = [service_image_tag(spec) for spec in plan.services]
    plain = statistics.median(_plain_start(images) for _ in range(runs))
    sites_mib = [mib for name, mib in memory.items() if name.startswith("site")]
    others = {name: round(mib, 1) for name, mib in memory.items() if not name.startswith("site")}
    return [
        row(
            f"services: a compose stack of {sites} mock sites started (network, front proxy, "
            "health checks, host proxy)",
            statistics.median(starts),
            runs,
            "docker run -d of the same site containers, one after the other",
            plain,
            note=f"removal {statistics.median(closes):.1f} s; memory per site container "
            f"{statistics.median(sites_mib):.1f} MiB, the rest {others} (cgroup working set)",
        )
    ]


def _memory_mib(container) -> float:
    stats = container.stats(stream=False)["memory_stats"]
    inactive = (stats.get("stats") or {}).get("inactive_file", 0)
    return (stats.get("usage", 0) - inactive) / MiB


def _plain_start(images: list[str]) -> float:
    started = time.perf_counter()
    names = []
    for image in images:
        done = subprocess.run(
            ["docker", "run", "-d", "--network", "none", image],
            capture_output=True,
            text=True,
            check=True,
        )
        names.append(done.stdout.strip())
    took = time.perf_counter() - started
    subprocess.run(["docker", "rm", "-f", *names], capture_output=True, check=True)
    return took
