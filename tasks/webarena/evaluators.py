"""WebArena's evaluators, with WebArena's verdicts: `string_match` on the agent's answer,
`url_match` on the page it ended on, `program_html` on pages it changed; a task's score is their
product. Checked against WebArena's own evaluator code by the cases in `tests/webarena_cases/`.

Two things differ on purpose, never in a verdict on honest input:
- `func:` targets and locators are not `eval()`ed (WebArena evaluates Python built from the page's
  URL, which the agent controls): each names one of WebArena's helpers, parsed with `ast` and
  called with literal arguments; anything else is an error.
- WebArena tokenizes with NLTK's English Punkt model, which must be downloaded; StateAct splits
  sentences with an untrained Punkt tokenizer. The two differ only around abbreviations, and only
  `must_include` with a one-character reference tokenizes at all.
"""

from __future__ import annotations

import ast
import html
from collections import defaultdict
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qs, urlparse

from harness.kernel.core import StateActError
from tasks.webarena.schema import WebArenaTask

PROMPTS = Path(__file__).with_name("prompts")
JUDGE_SYSTEM = "You are a helpful assistant"


class PageUnavailable(StateActError):
    """The browser itself failed (not the page): no verdict, so never read as "nothing found"."""


class Page(Protocol):
    """The browser page the evaluators read (the sandbox's browser, or a test's)."""

    url: str

    def goto(self, url: str) -> None: ...

    def content(self) -> str: ...

    def evaluate(self, script: str) -> Any: ...


class Judge(Protocol):
    """A chat model that answers one system + user message (WebArena uses temperature 0)."""

    def complete(self, system: str, user: str) -> str: ...


class Helpers(Protocol):
    """WebArena's site helpers that `func:` names (they call the sites' APIs)."""

    def shopping_get_latest_order_url(self) -> str: ...

    def shopping_get_sku_latest_review_author(self, sku: str) -> str: ...

    def shopping_get_sku_latest_review_rating(self, sku: str) -> str: ...


# string_match ---------------------------------------------------------------------------------
def clean_answer(answer: str) -> str:
    answer = answer.strip()
    if answer.startswith("'") and answer.endswith("'"):
        answer = answer[1:-1]
    elif answer.startswith('"') and answer.endswith('"'):
        answer = answer[1:-1]
    return answer.lower()


def word_tokenize(text: str) -> list[str]:
    # Imported here: NLTK loads SciPy and scikit-learn (about 3 s), which every CLI command
    # would pay at start, and only must_include with a one-character reference tokenizes.
    from nltk.tokenize import NLTKWordTokenizer, PunktSentenceTokenizer

    sentences = PunktSentenceTokenizer().tokenize(text)
    tokenizer = NLTKWordTokenizer()
    return [token for sentence in sentences for token in tokenizer.tokenize(sentence)]


def exact_match(ref: str, pred: str) -> float:
    return float(clean_answer(pred) == clean_answer(ref))


def must_include(ref: str, pred: str, tokenize: bool = False) -> float:
    clean_ref, clean_pred = clean_answer(ref), clean_answer(pred)
    # A one-character reference is matched as a token, so "0" is not found inside "10".
    if tokenize and len(clean_ref) == 1 and len(word_tokenize(clean_ref)) == 1:
        return float(clean_ref in word_tokenize(clean_pred))
    return float(clean_ref in clean_pred)


class JudgeFailed(StateActError):
    """No verdict from the judge model (none configured, a failed call, an empty or unreadable
    answer): the task could not be judged, which says nothing about the work."""


def _judged(judge: Judge | None, prompt: str, **fields: str) -> str:
    if judge is None:
        raise JudgeFailed("this task's answer is judged by a model; give one (--judge-model)")
    text = (PROMPTS / f"{prompt}.md").read_text(encoding="utf-8").format(**fields)
    try:
        return judge.complete(JUDGE_SYSTEM, text).lower()
    except JudgeFailed:
        raise
    except StateActError as exc:
        raise JudgeFailed(f"the judge model gave no verdict: {exc}") from None


def fuzzy_match(ref: str, pred: str, intent: str, judge: Judge | None) -> float:
    answer = _judged(judge, "fuzzy_match", question=intent, reference=ref, answer=pred)
    if "partially correct" in answer or "incorrect" in answer:
        return 0.0
    if "correct" not in answer:
        raise JudgeFailed(f"the judge's verdict says neither correct nor incorrect: {answer!r}")
    return 1.0


def unachievable_match(ref: str, pred: str, intent: str, judge: Judge | None) -> float:
    answer = _judged(judge, "unachievable_match", question=intent, reference=ref, answer=pred)
    if "different" in answer:
        return 0.0
    if "same" not in answer:
        raise JudgeFailed(f"the judge's verdict says neither same nor different: {answer!r}")
    return 1.0


def string_match(task: WebArenaTask, answer: str, judge: Judge | None = None) -> float:
    """The agent's final answer against `reference_answers`, as WebArena's StringEvaluator."""
    pred = clean_answer(answer)
    score = 1.0
    for approach, value in (task.eval.reference_answers or {}).items():
        if approach == "exact_match":
            score *= exact_match(value, pred)
        elif approach == "must_include":
            for must in value:
                score *= must_include(must, pred, tokenize=len(value) == 1)
        elif approach == "fuzzy_match":
            if value == "N/A":
                score *= exact_match(value, pred)
                if score != 1:  # WebArena then judges the agent's reason, whatever came before
                    score = unachievable_match(
                        task.eval.string_note or "", pred, task.intent, judge
                    )
            else:
                for reference in value:
                    score *= fuzzy_match(reference, pred, task.intent, judge)
    return score


# url_match ------------------------------------------------------------------------------------
def _split_url(url: str) -> tuple[str, dict[str, list[str]]]:
    parsed = urlparse(url)
    return parsed.netloc + parsed.path, parse_qs(parsed.query)


def url_match(task: WebArenaTask, page_url: str, resolve=lambda url: url) -> float:
    """The page the agent ended on against `reference_url` (`|OR|` alternatives, every query
    parameter of the references present), as WebArena's URLEvaluator."""
    if task.eval.url_note != "GOLD in PRED":
        raise StateActError(f"unknown url_note {task.eval.url_note!r}")
    references = [
        resolve(url).rstrip("/") for url in (task.eval.reference_url or "").split(" |OR| ")
    ]
    pred_base, pred_query = _split_url(str(page_url).rstrip("/"))
    ref_bases, ref_queries = [], defaultdict(set)
    for reference in references:
        base, query = _split_url(reference)
        ref_bases.append(base)
        for key, values in query.items():
            ref_queries[key].update(values)
    # WebArena tests `ref in pred_base` on strings: a reference path inside the page's matches.
    score = float(any(base in pred_base for base in ref_bases))
    for key, values in ref_queries.items():
        score *= float(any(value in pred_query.get(key, []) for value in values))
    return score


# program_html ---------------------------------------------------------------------------------
GITLAB_ROLE_SCRIPT = """(() => {{
    const elements = document.querySelectorAll(
        "td[data-label='Account'] span.gl-avatar-labeled-sublabel");
    let index = -1;
    for (let i = 0; i < elements.length; i++) {{
        if (elements[i].outerText === {account}) {{ index = i; break; }}
    }}
    return index;
}})()"""
GITLAB_ROLE_AT = (
    """(() => document.querySelectorAll("td.col-max-role span")[{index}].outerText)()"""
)


def reddit_get_post_url(url: str) -> str:
    parsed = urlparse(url)
    parts = parsed.path.split("/")
    if len(parts) < 4 or parts[1] != "f":
        return url
    return f"{parsed.scheme}://{parsed.netloc}/f/{parts[2]}/{parts[3]}/"


def gitlab_get_project_memeber_role(page: Page, account_name: str) -> str:  # WebArena's name
    try:
        index = page.evaluate(GITLAB_ROLE_SCRIPT.format(account=_js_string("@" + account_name)))
        return str(page.evaluate(GITLAB_ROLE_AT.format(index=int(index))))
    except PageUnavailable:
        raise
    except (StateActError, TypeError, ValueError):
        return ""


def _js_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def call_helper(expression: str, page: Page, helpers: Helpers | None) -> str:
    """A `func:` expression: one call of a WebArena helper with literal arguments (and `page` for
    the page), parsed, never evaluated."""
    try:
        call = ast.parse(expression.strip(), mode="eval").body
    except SyntaxError:
        call = None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.keywords:
        raise StateActError(f"unsupported func: expression {expression[:200]!r}")
    args = []
    for arg in call.args:
        if isinstance(arg, ast.Name) and arg.id == "page":
            args.append(page)
        elif isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            args.append(arg.value)
        else:
            raise StateActError(f"unsupported argument in func: expression {expression[:200]!r}")
    name = call.func.id
    if name == "reddit_get_post_url":
        return reddit_get_post_url(*args)
    if name == "gitlab_get_project_memeber_role":
        return gitlab_get_project_memeber_role(*args)
    if name.startswith("shopping_") and helpers is not None and hasattr(helpers, name):
        return str(getattr(helpers, name)(*args))
    raise StateActError(f"unknown WebArena helper {name!r} in a func: expression")


def _selected(target, page: Page, helpers: Helpers | None) -> str:
    locator = target.locator
    if not locator.strip():
        return page.content()
    if locator.startswith("document.") or locator.startswith("[...document."):
        for action in target.prep_actions:
            try:
                page.evaluate(f"() => {action}")
            except PageUnavailable:
                raise
            except StateActError:
                break  # as WebArena: the remaining preparations are skipped
        try:
            return str(page.evaluate(f"() => {locator}")) or ""
        except PageUnavailable:
            raise
        except StateActError:
            return ""  # the page is wrong: nothing selected
    if locator.startswith("func:"):
        return call_helper(locator.split("func:", 1)[1].replace("__page__", "page"), page, helpers)
    raise StateActError(f"unknown locator {locator[:200]!r}")


def program_html(
    task: WebArenaTask, page: Page, resolve=lambda url: url, helpers: Helpers | None = None
) -> float:
    """Pages the agent changed, read with each target's locator, as WebArena's
    HTMLContentEvaluator (which waits 3 s after each navigation; `page.goto` waits for the load)."""
    score = 1.0
    for target in task.eval.program_html:
        url = resolve(target.url)
        if url.startswith("func"):
            url = call_helper(
                url.split("func:", 1)[1].replace("__last_url__", page.url), page, helpers
            )
        if url != "last":
            page.goto(url)
        selected = html.unescape(_selected(target, page, helpers))
        required = target.required_contents
        if "exact_match" in required:
            score *= exact_match(required["exact_match"], selected)
        elif "must_include" in required:
            for content in required["must_include"]:
                alternatives = content.split(" |OR| ")
                score *= float(any(must_include(alt, selected) for alt in alternatives))
        else:
            raise StateActError(f"unknown required_contents {sorted(required)}")
    return score


EVALUATORS = ("string_match", "url_match", "program_html")


def evaluate_task(
    task: WebArenaTask,
    answer: str,
    page: Page | None,
    *,
    resolve=lambda url: url,
    judge: Judge | None = None,
    helpers: Helpers | None = None,
) -> dict[str, float]:
    """Each evaluator's value and their product (`score`), as WebArena's EvaluatorComb."""
    values: dict[str, float] = {}
    for kind in task.eval.eval_types:
        if kind == "string_match":
            values[kind] = string_match(task, answer, judge)
        elif page is None:
            raise StateActError(f"{kind} needs the browser's page, and there is none")
        elif kind == "url_match":
            values[kind] = url_match(task, page.url, resolve)
        else:
            values[kind] = program_html(task, page, resolve, helpers)
    score = 1.0
    for value in values.values():
        score *= value
    return {**values, "score": score}
