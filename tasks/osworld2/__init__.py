"""OSWorld 2.0 on StateAct's sandboxes: the benchmark's own task code runs on the host against a
guest-server contract that StateAct implements over a sandbox.

- `guest.py`: the HTTP routes OSWorld's controllers call on a guest machine (`/screenshot`,
  `/execute`, `/file`, `/setup/upload`, `/accessibility`, …), answered from a StateAct sandbox.
- `bridge.py`: runs the user's OSWorld-V2 checkout in a Python process of its own (its own
  interpreter and dependencies) and speaks JSON lines with it (`bridge_main.py`, stdlib only).
- `blockers.py`: what `suite --dry-run --osworld2` names as missing.

docs/osworld2.md says what equals OSWorld 2.0's harness and what differs.
"""
