"""What OSWorld's VM already is before a task's setup runs, where a StateAct sandbox differs.

A sandbox's clock runs on UTC; OSWorld's VM does not (b6781586 asks for "my current time zone to
UTC+0"). Its check, `is_utc_0`, reads the system zone, so on UTC the task would start done and a
do-nothing agent would score 1. Before the setup of a task whose check reads the zone, the sandbox
is put on START_ZONE (any zone that is not +0000 all year serves; OSWorld does not publish
its VM's).
Only such tasks are changed, so no other task's times move.
"""

from __future__ import annotations

from harness.kernel.core import StateActError
from sandboxes.base import Sandbox
from tasks.schema import Task

START_ZONE = "Asia/Hong_Kong"
ZONE_METRICS = {"is_utc_0"}


def reads_the_zone(task: Task) -> bool:
    return bool(ZONE_METRICS & set(task.evaluator.funcs)) if task.evaluator else False


def prepare_start_state(task: Task, sandbox: Sandbox) -> None:
    """Before the task's own setup (and before any agent): OSWorld's starting zone if its check
    reads the zone. Needs the root exec of the docker backend."""
    if not reads_the_zone(task):
        return
    script = (
        f"ln -sfn /usr/share/zoneinfo/{START_ZONE} /etc/localtime"
        f" && echo {START_ZONE} > /etc/timezone"
    )
    code, output = sandbox.exec(["bash", "-c", script], user="root")
    if code != 0:
        raise StateActError(
            f"putting the sandbox on OSWorld's non-UTC start zone failed: {output.strip()[-200:]}"
        )
