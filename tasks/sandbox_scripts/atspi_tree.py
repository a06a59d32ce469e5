"""Prints the desktop's AT-SPI tree as XML in OSWorld's format (its server's `/accessibility`).

Runs inside the sandbox with the system python3 (no lxml needed). The format is what OSWorld's
rules assume: one element per accessible named by its role (spaces as dashes), its name in `name`,
its states as `st:<state>="true"`, its object attributes as `attr:<name>`, the on-screen box as
`cp:screencoord`/`cp:size` when visible and showing, its text as the element's text, `image` and
`selection` flags, `val:` numbers and `act:<action>_desc`/`_kb`; a Calc sheet's table holds only
its showing cells. Limits as OSWorld's: depth 50, 1024 children.
"""

import re
import subprocess
import sys
import time
from xml.sax.saxutils import escape, quoteattr

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi, Gio, GLib  # noqa: E402

NAMESPACES = {
    "st": "state",
    "attr": "attributes",
    "cp": "component",
    "doc": "document",
    "docattr": "document/attributes",
    "txt": "text",
    "val": "value",
    "act": "action",
}
A11Y_BUS = ("org.a11y.Bus", "/org/a11y/bus", "org.freedesktop.DBus.Properties")
A11Y_SETTLE_S = 5
"""How long Gecko applications (Thunderbird, Firefox) take to build their tree once asked."""
MAX_DEPTH = 50
MAX_WIDTH = 1024
MAX_ROW = 1048576
# Names lxml accepts as an attribute's local name (OSWorld's dump fails on any other).
XML_NAME = re.compile(r"^[A-Za-z_][\w.-]*$")
# Characters XML 1.0 cannot hold (lxml refuses them in OSWorld's dump).
NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def clean(value):
    return NOT_XML.sub("", str(value))


def libreoffice_version():
    try:
        words = subprocess.run(
            ["libreoffice", "--version"], capture_output=True, text=True, timeout=20
        ).stdout.split()
        return tuple(int(part) for part in words[1].split("."))
    except Exception:
        return (7, 4)


def states_of(node):
    names = []
    for state in node.get_state_set().get_states():
        name = state.value_name.removeprefix("ATSPI_STATE_").lower()
        if name:
            names.append(name)
    return names


def attributes_of(node):
    attributes = {"name": node.get_name() or ""}
    states = states_of(node)
    attributes.update({f"st:{state}": "true" for state in states})
    for key, value in (node.get_attributes() or {}).items():
        attributes[f"attr:{key}"] = value
    if "visible" in states and "showing" in states:
        component = node.get_component_iface()
        if component is not None:
            box = component.get_extents(Atspi.CoordType.SCREEN)
            attributes["cp:screencoord"] = str((box.x, box.y))
            attributes["cp:size"] = str((box.width, box.height))
    if node.get_image_iface() is not None:
        attributes["image"] = "true"
    if node.get_selection_iface() is not None:
        attributes["selection"] = "true"
    value = node.get_value_iface()
    if value is not None:
        for key, read in (
            ("value", Atspi.Value.get_current_value),
            ("min", Atspi.Value.get_minimum_value),
            ("max", Atspi.Value.get_maximum_value),
            ("step", Atspi.Value.get_minimum_increment),
        ):
            try:
                attributes[f"val:{key}"] = str(read(value))
            except Exception:
                pass
    action = node.get_action_iface()
    if action is not None:
        for index in range(Atspi.Action.get_n_actions(action)):
            name = (Atspi.Action.get_action_name(action, index) or "").replace(" ", "-")
            attributes[f"act:{name}_desc"] = Atspi.Action.get_action_description(action, index)
            attributes[f"act:{name}_kb"] = Atspi.Action.get_key_binding(action, index)
    return attributes


def text_of(node):
    iface = node.get_text_iface()
    if iface is None:
        return ""
    text = Atspi.Text.get_text(iface, 0, Atspi.Text.get_character_count(iface)) or ""
    return text.replace("\ufffc", "").replace("\ufffd", "")


def open_tag(role, attributes):
    parts = [role]
    for key, value in attributes.items():
        if value is None or not XML_NAME.match(key.split(":", 1)[-1]):
            continue
        parts.append(f"{key}={quoteattr(clean(value))}")
    return "<" + " ".join(parts) + ">"


class Dump:
    def __init__(self):
        self.out = []
        self.libreoffice = None

    def node(self, node, depth, flag=None):
        raw_role = (node.get_role_name() or "").strip()
        role = (raw_role or "unknown").replace(" ", "-")
        if not XML_NAME.match(role):
            role = "unknown"
        if not flag:
            if raw_role == "document spreadsheet":
                flag = "calc"
            if raw_role == "application" and node.get_name() == "Thunderbird":
                flag = "thunderbird"
        try:
            attributes, text = attributes_of(node), text_of(node)
        except Exception:
            attributes, text = {"name": node.get_name() or ""}, ""
        self.out.append(open_tag(role, attributes) + escape(clean(text)))
        if depth < MAX_DEPTH:
            if flag == "calc" and role == "table":
                self.showing_cells(node, depth, flag)
            else:
                self.children(node, depth, flag)
        self.out.append(f"</{role}>")

    def children(self, node, depth, flag):
        try:
            for index in range(min(node.get_child_count(), MAX_WIDTH)):
                child = node.get_child_at_index(index)
                if child is not None:
                    self.node(child, depth + 1, flag)
        except Exception:
            pass

    def showing_cells(self, table, depth, flag):
        """The cells on screen, found as OSWorld does: row by row from the first showing one."""
        if self.libreoffice is None:
            self.libreoffice = libreoffice_version()
        columns = 1024 if self.libreoffice < (7, 4) else 16384
        index_base, first_showing, column_base = 0, False, None
        for row in range(MAX_ROW):
            column = 0
            for column in range(column_base or 0, columns):
                cell = table.get_child_at_index(index_base + column)
                showing = cell is not None and cell.get_state_set().contains(
                    Atspi.StateType.SHOWING
                )
                if showing:
                    self.node(cell, depth + 1, flag)
                    if not first_showing:
                        column_base, first_showing = column, True
                elif first_showing and column_base is not None or column >= 500:
                    break
            if first_showing and column == column_base or not first_showing and row >= 500:
                break
            index_base += columns


def enable_accessibility():
    """Turns the session's accessibility on, as it is on OSWorld's GNOME VM; True when it was off.

    Gecko applications expose no tree at all until `org.a11y.Status.IsEnabled` is true (GTK ones
    always do); they notice the change while running.
    """
    try:
        bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)

        def call(method, arguments):
            return bus.call_sync(
                *A11Y_BUS, method, arguments, None, Gio.DBusCallFlags.NONE, 5000, None
            )

        if call("Get", GLib.Variant("(ss)", ("org.a11y.Status", "IsEnabled"))).unpack()[0]:
            return False
        status = ("org.a11y.Status", "IsEnabled", GLib.Variant("b", True))
        call("Set", GLib.Variant("(ssv)", status))
        return True
    except Exception:  # no accessibility bus: GTK applications still answer
        return False


def main():
    if enable_accessibility():
        time.sleep(A11Y_SETTLE_S)
    declarations = " ".join(
        f'xmlns:{prefix}="https://accessibility.ubuntu.example.org/ns/{path}"'
        for prefix, path in NAMESPACES.items()
    )
    dump = Dump()
    desktop = Atspi.get_desktop(0)
    for index in range(desktop.get_child_count()):
        app = desktop.get_child_at_index(index)
        if app is not None:
            dump.node(app, 1)
    sys.stdout.write(f"<desktop-frame {declarations}>" + "".join(dump.out) + "</desktop-frame>")


main()
