"""Probes of what is on the screen (StructAgent's `a11y_match` and visual clauses, Appendix C).

`a11y_match` reads the desktop's accessibility tree (the same AT-SPI dump OSWorld's checkers read)
and answers whether an element with the given role, name, text and states is there.
`screen_region` reads a region of the current screenshot and answers whether its mean colour is
within a tolerance of the expected one, or whether it shows anything at all (`not_uniform`).
Both read the live desktop (a snapshot has no screen); without a desktop they answer None
(inconclusive), so the verifier falls back to its own judgement.
"""

from __future__ import annotations

import base64
import io
import shlex
from typing import Literal

from lxml import etree
from PIL import Image, ImageStat
from pydantic import Field, model_validator

from harness.kernel.core import StateActError, ToolError
from sandboxes.toolbox.observer import SAFE_DESKTOP_ENV
from tasks.getters.registry import ATSPI_DUMP

from .probes import ProbeOutcome, ProbeSpec, register_probe

STATE_NS = "https://accessibility.ubuntu.example.org/ns/state"
MATCHES_SHOWN = 5


class A11yMatch(ProbeSpec):
    kind: Literal["a11y_match"]
    role: str | None = None
    """The element's role as the dump names it (`push-button`, `check-box`, `label`, ...)."""
    name_contains: str | None = None
    text_contains: str | None = None
    states: list[str] = []
    """States that must be true (`checked`, `focused`, `selected`, `showing`, ...)."""
    expect_present: bool = True

    @model_validator(mode="after")
    def _something_to_match(self) -> A11yMatch:
        if not (self.role or self.name_contains or self.text_contains or self.states):
            raise ValueError("give at least one of role, name_contains, text_contains, states")
        return self


class ScreenRegion(ProbeSpec):
    kind: Literal["screen_region"]
    region: list[int] = Field(min_length=4, max_length=4)
    """left, top, right, bottom in screen pixels."""
    mean_color: list[int] | None = Field(None, min_length=3, max_length=3)
    tolerance: int = Field(40, ge=0, le=255)
    not_uniform: bool | None = None
    """True: the region must show something (not one flat colour); False: it must be flat."""

    @model_validator(mode="after")
    def _checkable(self) -> ScreenRegion:
        left, top, right, bottom = self.region
        if not (0 <= left < right and 0 <= top < bottom):
            raise ValueError(
                "`region` must be [left, top, right, bottom], left < right and top < bottom"
            )
        if self.mean_color is None and self.not_uniform is None:
            raise ValueError("give `mean_color` or `not_uniform`")
        return self


def _a11y_match(spec: A11yMatch, sandbox, scratch) -> ProbeOutcome:
    command = f"{SAFE_DESKTOP_ENV}python3 -c {shlex.quote(ATSPI_DUMP)}"
    code, dump = sandbox.exec(["bash", "-c", command], timeout=60)
    if code != 0 or not dump.strip().startswith("<"):
        return ProbeOutcome(None, f"no accessibility tree: {dump[-200:]}")
    root = etree.fromstring(dump.encode("utf-8"), etree.XMLParser(recover=True, huge_tree=True))
    if root is None:
        return ProbeOutcome(None, "the accessibility tree is empty")
    found = [node for node in root.iter() if isinstance(node.tag, str) and _matches(node, spec)]
    shown = "; ".join(_describe(node) for node in found[:MATCHES_SHOWN])
    verdict = bool(found) == spec.expect_present
    return ProbeOutcome(
        verdict, f"{len(found)} matching element(s)" + (f": {shown}" if shown else "")
    )


def _matches(node, spec: A11yMatch) -> bool:
    if spec.role and etree.QName(node).localname != spec.role.replace(" ", "-"):
        return False
    if spec.name_contains and spec.name_contains not in (node.get("name") or ""):
        return False
    if spec.text_contains and spec.text_contains not in (node.text or ""):
        return False
    return all(node.get(f"{{{STATE_NS}}}{state}") == "true" for state in spec.states)


def _describe(node) -> str:
    text = (node.text or "").strip()[:60]
    return f"{etree.QName(node).localname} {node.get('name')!r}" + (
        f" text {text!r}" if text else ""
    )


def _screen_region(spec: ScreenRegion, sandbox, scratch) -> ProbeOutcome:
    width, height = tuple(sandbox.config.display_size)
    try:
        shot = sandbox.call("desktop.screenshot", timeout=60.0, width=width, height=height)
    except (ToolError, StateActError) as exc:
        return ProbeOutcome(None, f"no screen to read: {exc}")
    image = Image.open(io.BytesIO(base64.b64decode(shot["png_b64"]))).convert("RGB")
    left, top, right, bottom = spec.region
    if right > image.width or bottom > image.height:
        raise ToolError(f"field `region`: outside the {image.width}x{image.height} screen.")
    crop = image.crop((left, top, right, bottom))
    mean = [round(v) for v in ImageStat.Stat(crop).mean]
    extrema = crop.getextrema()
    uniform = all(high - low <= 8 for low, high in extrema)
    checks, evidence = (
        [],
        [f"region {spec.region}: mean colour {mean}, {'flat' if uniform else 'varied'}"],
    )
    if spec.mean_color is not None:
        checks.append(
            all(abs(a - b) <= spec.tolerance for a, b in zip(mean, spec.mean_color, strict=True))
        )
    if spec.not_uniform is not None:
        checks.append(uniform != spec.not_uniform)
    return ProbeOutcome(all(checks), "; ".join(evidence))


register_probe("a11y_match", A11yMatch, _a11y_match)
register_probe("screen_region", ScreenRegion, _screen_region)
