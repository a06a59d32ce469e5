"""A node without the sandbox image loads it from the `docker save` archive the user names
(`--ray-image-archive`), or says in one sentence why it cannot."""

from __future__ import annotations

import io
import subprocess
import tarfile
import uuid

import pytest

from harness.apps.ray.cluster import prepare_node
from harness.run.config import RunConfig
from tests.conftest import require_docker


def tiny_image(tag: str) -> None:
    """An image with one file, imported from a tarball (no registry, no build)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        data = b"stateact ray image test\n"
        info = tarfile.TarInfo("marker.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    subprocess.run(["docker", "import", "-", tag], input=buffer.getvalue(), check=True)


def image_present(tag: str) -> bool:
    done = subprocess.run(["docker", "image", "inspect", tag], capture_output=True)
    return done.returncode == 0


@pytest.mark.docker
def test_missing_image_is_loaded_from_the_archive(tmp_path):
    require_docker()
    tag = f"stateact-raytest:{uuid.uuid4().hex[:12]}"
    archive = tmp_path / "image.tar"
    tiny_image(tag)
    try:
        subprocess.run(["docker", "save", tag, "-o", str(archive)], check=True)
        subprocess.run(["docker", "rmi", tag], check=True, capture_output=True)
        assert not image_present(tag)
        config = RunConfig(model="script/oracle")
        config.sandbox.image = tag
        missing = prepare_node(config, str(tmp_path / "nowhere.tar"))
        assert (
            missing == f"the image archive {tmp_path / 'nowhere.tar'} is not a file on this node."
        )
        assert prepare_node(config, str(archive)) is None
        assert image_present(tag)
    finally:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True)
