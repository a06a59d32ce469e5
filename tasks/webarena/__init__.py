"""WebArena tasks on StateAct: WebArena's published task format, the user's sites, and evaluators
whose verdicts equal WebArena's (`evaluators.py`), checked by differential cases computed with
WebArena's own evaluator code (`tests/webarena_cases/`).

- `schema.py`: the task file (`task_id`, `sites`, `start_url` with `__SHOPPING__`-style
  placeholders, `require_login`, `eval`, …) and its loader.
- `sites.py`: `--sites FILE`, placeholder resolution, and what a dry run names as missing.
- `evaluators.py`: `string_match`, `url_match` and `program_html`, combined as WebArena does.
"""
