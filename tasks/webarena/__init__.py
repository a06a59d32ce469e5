"""WebArena tasks on StateAct: WebArena's published task format, the user's sites, and evaluators
whose verdicts equal WebArena's (`evaluators.py`), checked by differential cases computed with
WebArena's own evaluator code (`tests/webarena_cases/`).

- `schema.py`: the task file (`task_id`, `sites`, `start_url` with `__SHOPPING__`-style
  placeholders, `require_login`, `eval`, …) and its loader.
- `task.py`: a WebArena object as a StateAct task, so `tasks/schema.py`'s `load_task`, the suite
  and the runner take WebArena files (and `test.raw.json#N` items) as they take OSWorld ones.
- `sites.py`: `--sites FILE`, placeholder resolution, accounts, what a dry run names as missing.
- `deployment.py`: the process's sites, parallelism, sign-in cache and judge; the blockers.
- `start.py` / `browser.py`: the reset hook, sign-in through each site's form (cached state), the
  start pages, and the observer's browser the evaluators read (`ObserverPage`).
- `rest.py`: WebArena's shop REST helpers, called from inside the sandbox.
- `scoring.py`: the verdict after the agent stopped, from the `finish` answer and the pages.
"""
