"""What a run's trajectory says about how the main agent worked: its tool calls, its delegations
to the GUI specialist and its own screen actions (the suite's results.jsonl columns)."""

from __future__ import annotations

from pathlib import Path

from harness.kernel.records import load_events


def agent_dir(run_dir: Path, result: dict) -> Path:
    """Where the main agent's trajectory is: the chosen rollout's folder under `--best-of`."""
    chosen = (result.get("best_of") or {}).get("selected")
    return run_dir / f"rollout-{int(chosen)}" if chosen else run_dir


def trajectory_counts(run_dir: Path) -> dict:
    """Main-agent tool calls, how many of them delegated to the GUI specialist, and how many were
    screen actions of the main agent's own (the `computer` tool of the baseline or `no-act`, or a
    bash/Python call on the screen under `--main-display`)."""
    steps = gui = own = 0
    for event in load_events(run_dir):
        if event.get("event") == "screen_use" and event.get("agent") == "main":
            own += 1  # a bash/python call on the screen, under --main-display
        if event.get("event") != "model_turn" or event.get("agent") != "main":
            continue
        for block in event.get("content", []):
            if block.get("type") == "tool_use":
                steps += 1
                params = block.get("input") or {}
                gui += (
                    block.get("name") == "delegate"
                    and isinstance(params, dict)
                    and params.get("agent") == "gui"
                )
                own += block.get("name") == "computer"
    return {"main_steps": steps, "gui_delegations": gui, "main_gui_actions": own}
