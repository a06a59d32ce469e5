"""`stateact report RUN_DIR`: a readable summary of one run (or of a suite directory);
`stateact report RUN_A RUN_B [--html OUT.html]`: two suite runs side by side."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from harness.control.andor.tree import draw_tree
from harness.kernel.core import StateActError
from harness.kernel.display import visible
from harness.kernel.records import load_events
from harness.reports.compare import compare_dirs
from harness.reports.compare_view import print_comparison, write_compare_html
from harness.reports.summary import summary_line
from harness.tools.plan import MARKS


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "report",
        help="summarize a run or suite directory, or compare two suite runs",
        description="With one directory: a summary of the run (or the suite's summary.json). With "
        "two suite directories: task by task side by side, regressions and improvements first, the "
        "totals and a paired bootstrap interval of the success-rate difference (B − A).",
    )
    parser.add_argument(
        "run_dir", help="a run directory (with trajectory.jsonl) or a suite directory"
    )
    parser.add_argument(
        "run_b", nargs="?", help="a second suite (or run) directory to compare the first with"
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument(
        "--html", metavar="OUT.html", help="with two suites, write the comparison page"
    )
    parser.set_defaults(handler=run)


def summarize_run(run_dir: Path) -> dict:
    """Turns, tool calls, cost, plan, gate rounds and final status of one run."""
    events = load_events(run_dir)
    if not events and not (run_dir / "result.json").exists():
        raise StateActError(
            f"{run_dir} is not a run directory (no trajectory.jsonl or result.json)."
        )
    tools: Counter[str] = Counter()
    turns: Counter[str] = Counter()
    plan, gate_rounds, compactions = [], [], 0
    for event in events:
        if event["event"] == "model_turn":
            turns[event.get("agent", "?")] += 1
            tools.update(
                b.get("name", "?") for b in event["content"] if b.get("type") == "tool_use"
            )
        elif event["event"] == "plan" and event.get("agent") == "main":
            plan = event["items"]
        elif event["event"] == "gate_round":
            gate_rounds.append(
                {"round": event["round"], "passed": event["passed"], "gaps": event["gaps"]}
            )
        elif event["event"] == "compaction":
            compactions += 1
    tree_path = run_dir / "tree.json"
    result_path = run_dir / "result.json"
    result = (
        json.loads(result_path.read_text())
        if result_path.exists()
        else {"status": "unfinished (no result.json)"}
    )
    return {
        "run_dir": str(run_dir),
        "result": result,
        "turns_by_agent": dict(turns),
        "tool_calls": dict(tools.most_common()),
        "plan": plan,
        "gate_rounds": gate_rounds,
        "compactions": compactions,
        "tree": json.loads(tree_path.read_text()) if tree_path.exists() else None,
    }


def _dollars(value) -> str:
    return "unknown (no price)" if value is None else f"${float(value):.4f}"


def render(summary: dict) -> str:
    result = summary["result"]
    lines = [
        f"Run {summary['run_dir']}",
        f"  task:    {result.get('task_id', '?')}",
        f"  status:  {result.get('status')}"
        + (f" — {result['error']}" if result.get("error") else ""),
        f"  score:   {result.get('score')}",
        f"  cost:    {_dollars(result.get('cost_usd'))} ({result.get('input_tokens', 0):,} tokens "
        f"in, {result.get('output_tokens', 0):,} out)",
        f"  time:    {result.get('duration_s', 0):.1f} s",
        "  turns:   " + ", ".join(f"{a} {n}" for a, n in summary["turns_by_agent"].items()),
        "  tools:   " + ", ".join(f"{t} ×{n}" for t, n in summary["tool_calls"].items()),
        f"  compactions: {summary['compactions']}",
    ]
    if summary["plan"]:
        lines.append("  plan:")
        lines += [f"    {MARKS.get(i['status'], '[?]')} {i['text']}" for i in summary["plan"]]
    if summary.get("tree"):  # the `andor` mode's AND/OR tree
        lines += [f"  {line}" for line in draw_tree(summary["tree"])]
    for round_ in summary["gate_rounds"]:
        verdict = {True: "passed", False: "rejected", None: "inconclusive"}[round_["passed"]]
        lines.append(f"  gate round {round_['round']}: {verdict}")
        lines += [f"    - {gap}" for gap in round_["gaps"]]
    return "\n".join(visible(line) for line in lines)


def render_suite(summary: dict, path: Path) -> str:
    """A suite's summary.json for a person: the totals, statuses, domains, trials, the report."""
    lines = [
        f"suite {path}: {summary.get('model')} ({summary.get('preset')}, {summary.get('control')})",
        "  " + summary_line(summary),
    ]
    statuses = summary.get("status_counts") or {}
    if statuses:
        lines.append("  statuses: " + ", ".join(f"{k} {v}" for k, v in statuses.items()))
    if summary.get("errors"):
        lines.append(f"  errors: {summary['errors']} (rerun with --resume --retry-errors)")
    if summary.get("unfinished"):
        lines.append(f"  unfinished: {summary['unfinished']} (continue with --resume)")
    trials = summary.get("trials")
    if trials:
        at_k = ", ".join(
            f"pass@{k} {v:.3f}" for k, v in trials["pass_at_k"].items() if v is not None
        )
        lines.append(
            f"  trials: {trials['trials']} per task; pass@1 {trials['pass_at_1']:.3f} "
            f"± {trials['pass_at_1_stderr']:.3f} (standard error); {at_k}"
        )
    for domain, stats in (summary.get("by_domain") or {}).items():
        lines.append(
            f"  {domain:<12} {stats['successes']}/{stats['tasks']} succeeded, "
            f"mean score {(stats['mean_score'] or 0):.3f}"
        )
    lines.append(f"  report: {path / 'report.html'} (or `stateact view {path}`); --json for all")
    return "\n".join(lines)


def run(args) -> int:
    if args.run_b is not None:
        return run_comparison(args)
    if args.html:
        raise StateActError("--html needs two suite directories to compare.")
    path = Path(args.run_dir)
    if not path.is_dir():
        raise StateActError(f"{path} is not a directory.")
    if (path / "summary.json").exists():
        summary = json.loads((path / "summary.json").read_text())
        print(json.dumps(summary, indent=2) if args.json else render_suite(summary, path))
        return 0
    summary = summarize_run(path)
    print(json.dumps(summary, indent=2, default=str) if args.json else render(summary))
    return 0


def run_comparison(args) -> int:
    dir_a, dir_b = Path(args.run_dir), Path(args.run_b)
    comparison = compare_dirs(dir_a, dir_b)
    if args.html:
        out = Path(args.html)
        if out.is_dir():
            raise StateActError(f"--html {out} is a folder; give a file name such as compare.html.")
        write_compare_html(comparison, out, (dir_a, dir_b))
    if args.json:
        print(json.dumps(comparison.to_json(), indent=2, default=str))
    else:
        print_comparison(comparison)
    if args.html:
        print(f"comparison: {args.html}", file=sys.stderr)
    return 0
