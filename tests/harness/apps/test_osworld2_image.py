"""The `osworld2` image: OSWorld 2.0's runs take it unless `--image` says otherwise, the dry run
names a task's applications missing from the image chosen, a missing image is one sentence, and
in one sandbox of the built image at 1920x1080 every application it declares really runs."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO, require_image, stateact
from tests.harness.apps.test_osworld2_run import FINISH, LOOK, MULTIPHASE, STANDIN, bash, models
from tests.harness.apps.test_osworld2_run import _script as script_file

__all__ = ["models"]  # the fixture

CAD_TASK = """
related_apps = ["terminal", "freecad", "zotero"]
domain = "cad"
instruction = "Export the part."
config = {"config": [], "evaluator": {"checkpoints": []}}
"""


def _dry_run(data: Path, *extra: str) -> list[str]:
    done = stateact(
        "suite",
        "--dry-run",
        "--osworld2",
        str(STANDIN),
        "--osworld2-data",
        str(data),
        "--judge-model",
        "openai/j",
        *extra,
        env={"WEBSITE_HOST_SUFFIX": "t"},
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    (record,) = [json.loads(line) for line in done.stdout.splitlines()]
    return record.get("reasons", [])


def test_osworld2_runs_default_to_the_osworld2_image_and_keep_an_explicit_one():
    from harness.apps.run_options import RunOptions, config_from_options

    def image(**options) -> str:
        return config_from_options(RunOptions(model="script/x", **options)).sandbox.image

    assert image(osworld2=str(STANDIN)) == "osworld2"
    assert image(osworld2=str(STANDIN), image="desktop") == "desktop"
    assert image() == "desktop"


def test_the_dry_run_names_the_applications_the_chosen_image_lacks(tmp_path):
    (tmp_path / "task_cad.py").write_text(textwrap.dedent(CAD_TASK))
    assert _dry_run(tmp_path) == ["application missing from the image osworld2: zotero"]
    assert _dry_run(tmp_path, "--image", "desktop") == [
        "application missing from the image desktop: freecad",
        "application missing from the image desktop: zotero",
    ]


def test_the_osworld2_image_declares_the_desktops_applications_and_its_own():
    from sandboxes.images.apps import declared_apps

    desktop, osworld2 = declared_apps("desktop"), declared_apps("stateact-osworld2:0123")
    assert set(desktop) < set(osworld2)
    added = {"freecad", "blender", "kicad", "musescore3", "shotcut", "openboard", "evince"}
    assert added <= set(osworld2) - set(desktop)
    assert not {"zotero", "reaper", "wps", "musescore"} & set(osworld2)  # not in Debian


@pytest.mark.docker
def test_a_missing_osworld2_image_is_one_sentence_naming_both_ways_on(tmp_path):
    """Definitions that differ from every built image (their hash is new) stand for an osworld2
    image nobody built; nothing starts."""
    from sandboxes.images.build import DEFINITIONS_ENV, IMAGE_NAMES, definitions_dir

    for name in IMAGE_NAMES:
        shutil.copytree(definitions_dir() / name, tmp_path / "images" / name)
    (tmp_path / "images" / "osworld2" / "blender.txt").write_text("blender\nhtop\n")
    model = script_file(tmp_path, [FINISH])
    args = ["run", str(MULTIPHASE), "--osworld2", str(STANDIN), "--model", model]
    images = {DEFINITIONS_ENV: str(tmp_path / "images")}
    done = stateact(*args, "--out", str(tmp_path / "run"), env=images)
    assert done.returncode == 2, done.stderr
    assert "the osworld2 image (OSWorld 2.0's applications) is not built" in done.stderr
    assert "`stateact image build osworld2`, or pass --image desktop" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "run").exists()


MUSICXML = """<?xml version="1.0" encoding="UTF-8"?>
<score-partwise version="3.1"><work><work-title>Resume Etude</work-title></work>
<part-list><score-part id="P1"><part-name>Flute</part-name>
<score-instrument id="P1-I1"><instrument-name>Flute</instrument-name></score-instrument>
</score-part></part-list><part id="P1"><measure number="1"><attributes><divisions>1</divisions>
<time><beats>4</beats><beat-type>4</beat-type></time><clef><sign>G</sign><line>2</line></clef>
</attributes><note><pitch><step>C</step><octave>5</octave></pitch><duration>4</duration>
<type>whole</type></note></measure></part></score-partwise>
"""

APP_CHECKS = {
    # what each check prints when the application really did its work, headless where it can
    "freecad": (
        "freecadcmd -c \"import FreeCAD, Part; print('volume', Part.makeBox(1, 2, 3).Volume)\"",
        ("volume 6.0",),
    ),
    "blender": (
        'blender -b --factory-startup --python-expr "import bpy; '
        "bpy.ops.mesh.primitive_cube_add(); print('objects', len(bpy.data.objects))\"",
        ("objects 4",),
    ),
    "kicad": (
        'python3 -c "import pcbnew; board = pcbnew.BOARD(); '
        "pcbnew.SaveBoard('/tmp/b.kicad_pcb', board); print('kicad', pcbnew.Version())\" "
        "&& grep -c kicad_pcb /tmp/b.kicad_pcb",
        ("kicad 6.0",),
    ),
    "musescore3": (
        "QT_QPA_PLATFORM=offscreen mscore3 -o /tmp/score.pdf /tmp/score.musicxml 2>/dev/null; "
        "pdftotext /tmp/score.pdf - | head -3",
        ("Resume Etude",),  # the score laid out and engraved, its title on the page
    ),
    "shotcut": (
        "melt -quiet color:red out=24 -consumer avformat:/tmp/red.mp4 vcodec=libx264 2>/dev/null; "
        "ffprobe -v error -show_entries stream=codec_name -of csv=p=0 /tmp/red.mp4; "
        "QT_QPA_PLATFORM=offscreen shotcut --version 2>&1 | head -1",
        ("h264", "Shotcut 22."),  # melt rendered a video; Shotcut starts
    ),
    "evince": (
        "evince-thumbnailer -s 200 /tmp/score.pdf /tmp/score.png && identify /tmp/score.png",
        ("PNG",),
    ),
}
"""Run in this order: Evince reads the PDF MuseScore wrote."""


@pytest.fixture(scope="module")
def osworld2_box():
    require_image("osworld2")
    from sandboxes import SandboxConfig, open_sandbox

    config = SandboxConfig(image="osworld2", memory_mb=3072)
    with open_sandbox(config) as box:
        yield box


@pytest.mark.docker
@pytest.mark.desktop
@pytest.mark.slow
def test_every_declared_application_runs_in_the_image(osworld2_box):
    from sandboxes.images.apps import declared_apps
    from tests.desktop_helpers import sh, window_of

    box = osworld2_box
    sh(box, "stateact-desktop start >/dev/null")
    assert "1920x1080" in sh(box, "xdpyinfo | grep dimensions")
    box.exec(["bash", "-c", f"cat > /tmp/score.musicxml <<'EOF'\n{MUSICXML}EOF"])
    for app, (script, expected) in APP_CHECKS.items():
        output = sh(box, script, timeout=300)
        assert all(text in output for text in expected), (app, output[-1500:])
    # OpenBoard has no headless mode: its board window comes up on the display
    sh(box, "(openboard >/tmp/openboard.log 2>&1 &)")
    assert window_of(box, "OpenBoard", "--class")
    # MuseScore has run before, as on the guest: its score window comes, no Startup Wizard
    sh(box, "(mscore3 >/tmp/mscore.log 2>&1 &)")
    assert window_of(box, "MuseScore 3")
    assert "Startup Wizard" not in sh(box, "sleep 2; wmctrl -l")
    for program in ("freecad", "blender", "kicad", "mscore3", "shotcut", "evince", "lodraw"):
        sh(box, f"command -v {program}")
    declared = declared_apps("osworld2")
    assert set(APP_CHECKS) | {"openboard", "libreoffice_draw", "ffmpeg"} <= set(declared)


@pytest.mark.docker
@pytest.mark.desktop
@pytest.mark.slow
def test_a_standin_task_runs_end_to_end_on_the_osworld2_image(tmp_path, models):  # noqa: F811
    """`stateact run` with --osworld2 and no --image: the multiphase stand-in on the osworld2
    image, scored as the stand-in computes."""
    require_image("osworld2")
    turns = [bash("echo alpha > ~/report.txt"), *LOOK, FINISH]
    turns += [bash("echo beta >> ~/report.txt"), *LOOK, FINISH]
    with models([{"text": "yes"}]) as judge:
        env = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": judge.base_url}
        done = stateact(
            "run",
            str(MULTIPHASE),
            "--osworld2",
            str(STANDIN),
            "--judge-model",
            "openai/judge-small",
            "--model",
            script_file(tmp_path, turns),
            "--preset",
            "no-verify",
            "--out",
            str(tmp_path / "run"),
            env=env,
            cwd=REPO,
        )
    assert done.returncode == 0, done.stderr
    line = json.loads(done.stdout.splitlines()[-1])
    assert (line["score"], line["partial_score"], line["phases_judged"]) == (1.0, 1.0, 2)
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["sandbox"]["image"] == "osworld2"
