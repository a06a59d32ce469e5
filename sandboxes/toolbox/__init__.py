"""The in-sandbox toolbox: a JSON-lines server on stdin/stdout that runs inside a sandbox.

It imports only the standard library, `pexpect` and Pillow, because it is copied alone into the
sandbox (to /opt/stateact/toolbox, root-owned) and started there by `base.toolbox_argv` (an isolated
`python3 -I`; `python3 -m toolbox` works for local testing). The protocol and the
methods are described in `server.py`.
"""
