"""OSWorld's result tabulation (its show_result.py), re-implemented from its documented behaviour:

- one experiment's results live under <result dir>/<action space>/<observation type>/<model>;
  without that folder it says "New experiment, no result yet." and returns None;
- every folder below it is a domain, every folder in a domain an example; an example counts once
  it holds result.txt, whose text is read as a float (text that does not parse counts as its
  truth: 1.0 when not empty);
- it prints each domain's count ("Runned") and mean score in percent ("Success Rate"), then the
  Office (libreoffice_calc, _impress, _writer), Daily (vlc, thunderbird, chrome) and Professional
  (gimp, vs_code) groups, which it reads without a check, so a run lacking one of those eight
  domains stops there with a KeyError (OSWorld's own partial runs too);
- it writes all_result.json (the scores by domain and example) into the experiment's folder, then
  prints the count and mean over all examples and returns the list of scores;
- OSWorld's runner treats an example folder with result.txt as finished and empties the others.
"""

from __future__ import annotations

import os

GROUPS = {
    "Office": ("libreoffice_calc", "libreoffice_impress", "libreoffice_writer"),
    "Daily": ("vlc", "thunderbird", "chrome"),
    "Professional": ("gimp", "vs_code"),
}


def _score(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return float(bool(text))


def tabulate(action_space, model, observation_type, result_dir) -> dict | None:
    """{"all", "domains", "lines", "stopped"}: the scores, the printed lines and the KeyError's
    domain when the groups stop it (None when it ran through); None when there is no result."""
    target = os.path.join(result_dir, action_space, observation_type, model)
    if not os.path.exists(target):
        return None
    domains: dict[str, list[float]] = {}
    by_example: dict[str, dict[str, float]] = {}
    every: list[float] = []
    for domain in os.listdir(target):
        domain_dir = os.path.join(target, domain)
        if not os.path.isdir(domain_dir):
            continue
        for example in os.listdir(domain_dir):
            example_dir = os.path.join(domain_dir, example)
            if not os.path.isdir(example_dir) or "result.txt" not in os.listdir(example_dir):
                continue
            with open(os.path.join(example_dir, "result.txt")) as handle:
                score = _score(handle.read())
            domains.setdefault(domain, []).append(score)
            by_example.setdefault(domain, {})[example] = score
            every.append(score)
    lines = [
        f"Domain: {d} Runned: {len(s)} Success Rate: {sum(s) / len(s) * 100} %"
        for d, s in domains.items()
    ]
    for group, members in GROUPS.items():
        missing = [m for m in members if m not in domains]
        if missing:
            return {"all": every, "domains": domains, "lines": lines, "stopped": missing[0]}
        scores = [s for m in members for s in domains[m]]
        lines.append(f"{group} Success Rate: {sum(scores) / len(scores) * 100} %")
    with open(os.path.join(target, "all_result.json"), "w") as handle:
        handle.write(str(by_example))
    if not every:
        return None
    lines.append(f"Runned: {len(every)} Current Success Rate: {sum(every) / len(every) * 100} %")
    return {"all": every, "domains": domains, "lines": lines, "stopped": None}


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
