"""Service stacks written for the tests: mock sites (`tests/data/service_site.py`) built FROM the
local base image (nothing is pulled), laid out as OSWorld-web lays out its compose stack: a
top-level file that only includes a main file (caddy-docker-proxy, which StateAct replaces) and a
file per site, with Caddy labels, `${VAR}` interpolation and a `.env`."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

SITE_SERVER = Path(__file__).parent / "data" / "service_site.py"
SUFFIX = "svc.test"
STACK_SERVICES = ("shop_backend", "shop_admin", "shop_frontend", "news_web")
"""The compose services of `compose_stack` (their built images are removed after the tests)."""
MiB = 1 << 20


def site_checkout(folder: Path) -> Path:
    """A build context whose image serves `service_site.py` (port and name from its command)."""
    from sandboxes.images.build import image_ref

    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(SITE_SERVER, folder / "service_site.py")
    (folder / "Dockerfile").write_text(
        f"FROM {image_ref('base')}\n"
        "USER root\n"
        "ARG GREETING=none\n"
        'RUN mkdir -p /srv && echo "$GREETING" > /srv/greeting.txt\n'
        "COPY service_site.py /srv/service_site.py\n"
        "USER nobody\n"
        'CMD ["python3", "/srv/service_site.py", "8000", "site"]\n'
    )
    return folder


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())


def compose_stack(root: Path) -> Path:
    """Two sites: `shop` (a frontend, and two backends routed by path: `/api/admin*` to the admin
    though its label is numbered after `/api*`) and `news` (one container, `{{upstreams 3000}}`);
    limits given both ways; the caddy service to be replaced. Returns the top-level file."""
    site_checkout(root / "shop_web" / "backend")
    site_checkout(root / "news_web")
    write(root / ".env", "GREETING_WORD=hello\n")
    write(
        root / "docker-compose.yml",
        """
        include:
          - ./docker-compose.main.yml
          - path: ./shop_web/web-compose.yml
          - ./news_web/web-compose.yml
        """,
    )
    write(
        root / "docker-compose.main.yml",
        """
        services:
          caddy:
            image: lucaslorentz/caddy-docker-proxy:2.8-alpine
            ports: ["80:80", "443:443"]
            environment: [CADDY_INGRESS_NETWORKS=web]
            networks: [web]
            volumes:
              - /var/run/docker.sock:/var/run/docker.sock
              - caddy_data:/data
        networks:
          web:
        volumes:
          caddy_data:
        """,
    )
    write(
        root / "shop_web" / "web-compose.yml",
        """
        services:
          shop_backend:
            build:
              context: ./backend
              args:
                GREETING: "${GREETING_WORD} from ${HOST_SUFFIX}"
            command: ["python3", "/srv/service_site.py", "8000", "shop-backend"]
            environment:
              - API_PREFIX=/api
            expose: ["8000"]
            networks: [web]
            mem_limit: 300m
            cpus: 0.5
            pids_limit: 200
          shop_admin:
            build: ./backend
            command: python3 /srv/service_site.py 8001 shop-admin
            expose: ["8001"]
            networks: [web]
          shop_frontend:
            build:
              context: ./backend
            command: ["python3", "/srv/service_site.py", "8080", "shop-frontend"]
            expose: ["8080"]
            networks: [web]
            depends_on: [shop_backend, shop_admin]
            deploy:
              resources:
                limits: {memory: 200M, pids: 100}
            labels:
              caddy: "${CADDY_SCHEME-http://}shop.${HOST_SUFFIX:-localhost}"
              caddy.0_reverse_proxy: "/api* shop_backend:8000"
              caddy.1_reverse_proxy: "/api/admin* shop_admin:8001"
              caddy.2_reverse_proxy: "shop_frontend:8080"
        """,
    )
    write(
        root / "news_web" / "web-compose.yml",
        """
        services:
          news_web:
            build: .
            command: ["python3", "/srv/service_site.py", "3000", "news"]
            expose: ["3000"]
            networks: [web]
            labels:
              caddy: "news.${HOST_SUFFIX:-localhost}"
              caddy.reverse_proxy: "{{upstreams 3000}}"
        """,
    )
    return root / "docker-compose.yml"


def remove_built_images(names) -> None:
    """The images the tests built (kept by design for a user's next suite)."""
    from sandboxes.docker_backend import docker_client
    from sandboxes.service_spec import IMAGE_PREFIX

    try:
        client = docker_client()
    except Exception:  # no engine: nothing was built
        return
    for image in client.images.list():
        for tag in image.tags:
            name = tag.split(":")[0]
            if name.startswith(IMAGE_PREFIX) and name.removeprefix(IMAGE_PREFIX) in names:
                try:
                    client.images.remove(tag)
                except Exception as exc:  # in use by another run's test: left to it
                    print(f"kept {tag}: {exc}")


def managed(network: str) -> tuple[list, list]:
    """The containers and networks still on the engine for the stack on `network`."""
    from sandboxes.docker_backend import LABEL, docker_client

    client = docker_client()
    containers = [
        c.name
        for c in client.containers.list(all=True, filters={"label": LABEL})
        if c.name.startswith(network)
    ]
    networks = [n.name for n in client.networks.list(names=[network])]
    return containers, networks
