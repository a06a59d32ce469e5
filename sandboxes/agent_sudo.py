"""`--agent-sudo`: the agent's user gets OSWorld's sudo (password `password`, which OSWorld's task
instructions give), off by default.

What it costs in trust (docs/osworld-setup.md, "--agent-sudo"): with it the agent can become root
in its sandbox, so it can change anything there, the system's programs and the harness's toolbox
files included, and act as any user of the sandbox, the observers' too. The sandbox's walls stay:
root in the container has only the container's few capabilities (file ownership, reading past
permissions, switching users, signals), the engine's default seccomp profile, no network unless
`--network`, and the same memory, CPU and process limits, so the host and other sandboxes stay out
of reach. What the observers can still guarantee is what they read from outside the sandbox: the
files `copy_out` brings out through the engine and the checks the host computes on them. Anything
the harness runs inside the sandbox after the agent (postconfig commands, `vm_command_line`
getters, the gate's live queries) runs programs root could have replaced.
"""

from __future__ import annotations

import shlex

from sandboxes.base import SANDBOX_USER

AGENT_PASSWORD = "password"
"""OSWorld's VM user's password (its tasks' instructions and CLIENT_PASSWORD say so)."""
SUDOERS_FILE = "/etc/sudoers.d/stateact-agent-sudo"
SECURITY_OPTIONS = ["no-new-privileges"]
"""The container's security options without --agent-sudo: setuid programs (sudo) gain nothing."""


def security_options(agent_sudo: bool) -> list[str]:
    """sudo is a setuid program: it can only raise the agent's rights without no-new-privileges."""
    return [] if agent_sudo else list(SECURITY_OPTIONS)


def grant_script() -> str:
    """Root shell text that gives `user` OSWorld's sudo: a password and a sudoers rule, checked
    with visudo so a broken rule fails here rather than at the agent's first sudo."""
    rule = f"{SANDBOX_USER} ALL=(ALL:ALL) ALL"
    # sudo looks its host name up; without the network the sandbox's /etc/hosts lacks it, and
    # every sudo would print "unable to resolve host".
    hosts = 'grep -q "$(hostname)" /etc/hosts || echo "127.0.1.1 $(hostname)" >> /etc/hosts'
    return (
        f"{{ {hosts}; }}"
        f" && echo {shlex.quote(f'{SANDBOX_USER}:{AGENT_PASSWORD}')} | chpasswd"
        f" && printf '%s\\n' {shlex.quote(rule)} > {SUDOERS_FILE}"
        f" && chmod 0440 {SUDOERS_FILE} && visudo -cqf {SUDOERS_FILE}"
    )
