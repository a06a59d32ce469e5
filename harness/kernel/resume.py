"""Resume an interrupted run from its trajectory.

The sandbox of a killed run is gone, so its state is rebuilt the plain way: the task's setup runs
in a fresh sandbox and every state-changing tool call the run recorded (main agent and workers)
is executed again in order. The main agent's history, plan, counters and usage are restored from
the same events, and the run continues in the same trajectory file, after a `resumed` event.
"""

from __future__ import annotations

import logging

from harness.kernel.core import Usage
from harness.kernel.records import RunRecord, internalize_images, load_events

log = logging.getLogger(__name__)

REPLAYED_TOOLS = {"bash", "python", "str_replace_based_edit_tool"}
READ_ONLY_EDITOR_COMMANDS = {"view"}


def restore_counters(events: list[dict], stats) -> None:
    """Add what `events` (a trajectory's) spent to `stats`: model turns (the main agent's apart),
    their usage and tool calls, compactions' usage, delegations."""
    for event in events:
        kind, who = event["event"], event.get("agent")
        if kind == "model_turn":
            stats.model_turns += 1
            stats.usage.add(Usage(**event.get("usage", {})))
            stats.tool_uses += sum(1 for b in event["content"] if b.get("type") == "tool_use")
            stats.main_turns += who == "main"
        elif kind == "compaction" and who == "main":
            stats.usage.add(Usage(**event.get("usage", {})))
        elif kind == "delegation":  # every delegation, as `delegate` counts them live
            stats.delegations += 1


def restore_main_agent(
    agent, record: RunRecord, sandbox, since_event_index: int | None = None
) -> None:
    """Put `agent` (freshly built) and `sandbox` (freshly set up) back where the recorded run was.

    With `since_event_index` (the trajectory position of a milestone whose snapshot `sandbox`
    started from), only the tool calls recorded after that position are replayed; the history is
    restored whole. The run's counters count the whole trajectory; the agent's own turn count
    (its turn budget) counts from its last `task` (an OSWorld 2.0 phase's agent starts anew).
    """
    indexed = [
        (n, event) for n, event in enumerate(load_events(record.dir)) if event["event"] != "end"
    ]
    since = -1 if since_event_index is None else since_event_index
    loop = agent.loop
    restore_counters([event for _, event in indexed], agent.stats)
    messages: list[dict] = []
    replayed = 0
    pending_results: dict[str, list[dict]] = {}
    for index, event in indexed:
        kind, who = event["event"], event.get("agent")
        if kind == "model_turn":
            uses = [b for b in event["content"] if b.get("type") == "tool_use"]
            if not str(who).startswith("gate") and index > since:
                replayed += _replay_calls(loop, uses)
            if who == "main":
                loop.turns += 1
                messages.append(
                    {
                        "role": "assistant",
                        "content": internalize_images(record.dir, event["content"]),
                    }
                )
                for use in uses:
                    loop.tool_counts[use.get("name", "")] += 1
                pending_results["main"] = uses
        elif who != "main":
            continue
        elif kind == "task":
            messages = [
                {"role": "user", "content": internalize_images(record.dir, event["content"])}
            ]
            loop.turns = 0
            loop.tool_counts.clear()
        elif kind == "tool_results":
            messages.append(
                {"role": "user", "content": internalize_images(record.dir, event["content"])}
            )
            pending_results.pop("main", None)
        elif kind == "compaction":
            messages = _compacted(messages, event)
        elif kind == "plan":
            agent.plan.items = event["items"]
    if pending_results.get("main"):
        # Killed between a model turn and its results: the calls were replayed above, but the model
        # never saw their output; tell it so rather than inventing results.
        messages.append(_lost_results(pending_results["main"]))
    loop.messages = messages
    record.append(
        "resumed",
        agent="harness",
        replayed_calls=replayed,
        restored_messages=len(messages),
        since_event_index=since_event_index,
    )
    log.info("resumed: %d messages restored, %d tool calls replayed", len(messages), replayed)


def _compacted(messages: list[dict], event: dict) -> list[dict]:
    """The history after a recorded compaction: the instruction, the summary, the kept turns."""
    kept = event["kept_messages"]
    instruction = [
        b for b in messages[0]["content"] if not b.get("text", "").startswith("<earlier-work")
    ]
    summary = {
        "type": "text",
        "text": f"<earlier-work-summary>\n{event['summary']}\n</earlier-work-summary>",
    }
    return [
        {"role": "user", "content": [*instruction, summary]},
        *messages[len(messages) - kept :],
    ]


def _lost_results(uses: list[dict]) -> dict:
    """The user turn answering calls whose results the interrupted run never recorded."""
    text = (
        "The run was interrupted while this call ran; it was run again on resume, but its output "
        "was lost. Check its effect."
    )
    return {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": use.get("id", ""),
                "is_error": True,
                "content": [{"type": "text", "text": text}],
            }
            for use in uses
        ],
    }


def _replay_calls(loop, uses: list[dict]) -> int:
    count = 0
    for use in uses:
        name, params = use.get("name"), use.get("input") or {}
        if name not in REPLAYED_TOOLS or name not in loop.tools:
            continue
        if (
            name == "str_replace_based_edit_tool"
            and params.get("command") in READ_ONLY_EDITOR_COMMANDS
        ):
            continue
        try:
            loop.tools[name](**params)
        except (
            Exception
        ) as exc:  # the original call may have failed too; its effect is what matters
            log.info("replayed %s failed again: %s", name, exc)
        count += 1
    return count
