"""The toolbox's screenless sessions on a real kernel (the bubblewrap backend): once the harness
calls `session.screen allowed=false`, the agent's bash and Python cannot connect to an abstract
Unix socket made outside their sessions (as the desktop's X display and buses are), while their own
sockets, files and programs work; observer sessions keep access, and `allowed=true` gives it back.
"""

from __future__ import annotations

import pytest

from harness.kernel.core import ToolError

NAME = "stateact-test-display"
SERVE = (
    f"python3 -c \"import socket,os; s=socket.socket(socket.AF_UNIX); s.bind('\\0{NAME}'); "
    f"s.listen(8); open('/tmp/{NAME}.ready','w').close()\n"
    "while True:\n c,_=s.accept(); c.sendall(b'screen'); c.close()\" >/dev/null 2>&1 &"
    f" for i in $(seq 50); do [ -f /tmp/{NAME}.ready ] && break; sleep 0.1; done; echo served"
)
CONNECT = (
    "import socket\ns = socket.socket(socket.AF_UNIX)\n"
    "try:\n    s.connect('\\0" + NAME + "')\n    print('reached', s.recv(6).decode())\n"
    "except OSError as exc:\n    print('refused', exc.errno)\n"
)


def _bash_connect(sandbox, session: str = "default") -> str:
    command = f"python3 - <<'EOF'\n{CONNECT}EOF"
    return sandbox.call("bash.run", command=command, session=session)["output"].strip()


def test_agent_sessions_reach_no_outside_abstract_socket_until_allowed(local_sandbox):
    served = local_sandbox.call("bash.run", command=SERVE, session="server", observer=True)
    assert "served" in served["output"]
    assert _bash_connect(local_sandbox) == "reached screen"  # before: the agent reaches it

    answer = local_sandbox.call("session.screen", allowed=False)
    assert answer == {"allowed": False, "enforced": "landlock"}
    assert _bash_connect(local_sandbox) == "refused 1"  # EPERM, whatever the agent tries
    assert _bash_connect(local_sandbox, session="worker-1") == "refused 1"
    python = local_sandbox.call("python.run", code=CONNECT)["output"].strip()
    assert python == "refused 1"
    # The harness's observers still reach it; the agent's own work is unaffected.
    assert (
        local_sandbox.call("python.run", code=CONNECT, session="probe", observer=True)[
            "output"
        ].strip()
        == "reached screen"
    )
    own = local_sandbox.call(
        "bash.run",
        command='echo data > /tmp/f && cat /tmp/f && python3 -c "import socket; a,b = '
        "socket.socketpair(); a.sendall(b'ok'); print(b.recv(2).decode())\"",
    )["output"].split()
    assert own == ["data", "ok"]

    local_sandbox.call("session.screen", allowed=True)
    assert _bash_connect(local_sandbox) == "reached screen"


def test_session_screen_needs_a_boolean(local_sandbox):
    with pytest.raises(ToolError):
        local_sandbox.call("session.screen", allowed="no")
