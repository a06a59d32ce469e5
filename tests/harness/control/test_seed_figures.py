"""The seed papers' figures on hand-built inputs with hand-computed values: StructuredAgent's tree
efficiency, plan preservation and recovery rate (`andor/tree.py` `tree_metrics`, paper 002
App. D "Metric Definitions") and StructAgent's recovery rate (`structagent/recovery.py`)."""

from __future__ import annotations

import json

from harness.control.andor.tree import Node, Tree, tree_metrics
from harness.control.structagent.recovery import recovery_rate


def repaired_tree() -> Tree:
    """1 AND
    ├ 1.1 succeeded
    ├ 1.2 OR, repaired twice, succeeded
    │  ├ 1.2.1 failed, retired by the first repair
    │  │  └ 1.2.1.1 under a retired node: deleted with it
    │  ├ 1.2.2 added by the first repair, failed, retired by the second
    │  └ 1.2.3 added by the second repair, succeeded
    ├ 1.3 pruned
    └ 1.4 repaired once, still failed
       └ 1.4.1 added by that repair, failed"""
    tree = Tree("root")
    root = tree.root
    root.kind, root.status = "and", "succeeded"
    root.add_child("a").status = "succeeded"
    alternatives = root.add_child("b", kind="or")
    alternatives.status, alternatives.revisions = "succeeded", 2
    first = alternatives.add_child("b1")
    first.status, first.retired = "failed", True
    first.add_child("b1 part").status = "pending"
    second = alternatives.add_child("b2", from_repair=True)
    second.status, second.retired = "failed", True
    alternatives.add_child("b3", from_repair=True).status = "succeeded"
    root.add_child("c").status = "pruned"
    last = root.add_child("d")
    last.status, last.revisions = "failed", 1
    last.add_child("d1", from_repair=True).status = "failed"
    return tree


def test_tree_efficiency_plan_preservation_and_recovery_rate_by_hand():
    metrics = tree_metrics(repaired_tree(), or_switches=0, actions=5)
    assert (metrics["nodes"], metrics["pruned"], metrics["repairs"]) == (10, 1, 3)
    # live: 10 nodes less 3 deleted (1.2.1, 1.2.1.1, 1.2.2) and 1 pruned (1.3) = 6 of 10
    assert metrics["tree_efficiency"] == 0.6
    # planned: the 7 not added by a repair; deleted among them 1.2.1 and 1.2.1.1: 5 of 7
    assert metrics["plan_preservation"] == round(5 / 7, 3) == 0.714
    # 3 repair attempts (1.2 twice, 1.4 once); one restored its node (1.2 succeeded)
    assert metrics["recovery_rate"] == round(1 / 3, 3) == 0.333


def test_a_tree_without_repairs_has_full_preservation_and_a_zero_recovery_rate():
    tree = Tree("root")
    tree.root.kind, tree.root.status = "and", "succeeded"
    tree.root.add_child("a").status = "succeeded"
    tree.root.add_child("b").status = "pruned"
    metrics = tree_metrics(tree, or_switches=0, actions=1)
    assert (metrics["tree_efficiency"], metrics["plan_preservation"]) == (round(2 / 3, 3), 1.0)
    assert metrics["recovery_rate"] == 0.0  # no attempt: 0, the paper's convention (Table 7)


def test_a_saved_tree_keeps_which_nodes_a_repair_added(tmp_path):
    tree = repaired_tree()
    tree.run_dir = tmp_path
    tree.save("test")
    again = Tree.load(tmp_path)
    assert tree_metrics(again, 0, 5) == tree_metrics(tree, 0, 5)
    old = json.loads((tmp_path / "tree.json").read_text())
    del old["root"]["children"][0]["from_repair"]  # a tree.json written before the field
    assert Node.from_dict(old["root"]["children"][0]).from_repair is False


def test_structagent_recovery_rate():
    assert recovery_rate(1, 3) == 0.333
    assert recovery_rate(2, 2) == 1.0
    assert recovery_rate(0, 0) is None  # no recovery was inserted: no rate
