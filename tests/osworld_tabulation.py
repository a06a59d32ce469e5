"""OSWorld's result tabulation (its show_result.py), re-implemented from its documented behaviour:

- the results of one experiment live under <result dir>/<action space>/<observation type>/<model>;
  without that folder there is "no result yet";
- every folder below it is a domain, every folder in a domain an example; an example counts once
  it holds result.txt, whose text is read as a float (a file that does not parse counts 0.0);
- it prints each domain's count ("Runned") and mean score as a percentage ("Success Rate"), then
  the same over all examples, and returns the list of scores;
- the runner's resume treats an example folder with result.txt as finished.
"""

from __future__ import annotations

import os


def tabulate(action_space, model, observation_type, result_dir) -> dict | None:
    """{"all": [scores], "domains": {domain: [scores]}, "lines": printed lines}; None if no results."""
    target = os.path.join(result_dir, action_space, observation_type, model)
    if not os.path.isdir(target):
        return None
    domains: dict[str, list[float]] = {}
    for domain in sorted(os.listdir(target)):
        domain_dir = os.path.join(target, domain)
        if not os.path.isdir(domain_dir):
            continue
        for example in sorted(os.listdir(domain_dir)):
            example_dir = os.path.join(domain_dir, example)
            if not os.path.isdir(example_dir) or "result.txt" not in os.listdir(example_dir):
                continue
            try:
                with open(os.path.join(example_dir, "result.txt")) as handle:
                    score = float(handle.read())
            except ValueError:
                score = 0.0
            domains.setdefault(domain, []).append(score)
    every = [score for scores in domains.values() for score in scores]
    if not every:
        return None
    lines = [
        f"Domain: {d}, Runned: {len(s)}, Success Rate: {sum(s) / len(s) * 100}%"
        for d, s in domains.items()
    ]
    lines.append(f"Runned: {len(every)}, Current Success Rate: {sum(every) / len(every) * 100}%")
    return {"all": every, "domains": domains, "lines": lines}


def finished_examples(action_space, model, observation_type, result_dir) -> dict[str, list[str]]:
    """The examples a resumed OSWorld run would skip: folders holding result.txt, per domain."""
    target = os.path.join(result_dir, action_space, observation_type, model)
    done: dict[str, list[str]] = {}
    for domain in sorted(os.listdir(target)) if os.path.isdir(target) else []:
        domain_dir = os.path.join(target, domain)
        for example in sorted(os.listdir(domain_dir)) if os.path.isdir(domain_dir) else []:
            if os.path.isfile(os.path.join(domain_dir, example, "result.txt")):
                done.setdefault(domain, []).append(example)
    return done
