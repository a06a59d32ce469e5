"""Judge calls to an OpenAI-compatible endpoint, set up as OSWorld 2.0's OSWORLD_EVAL_MODEL_*."""

import json
import os
import urllib.request


def _settings(prefix, fallback=None):
    get = os.environ.get
    name = get(f"{prefix}_NAME") or get(f"{prefix}_MODEL")
    if not name and fallback:
        return _settings(fallback)
    key = get(get(f"{prefix}_API_KEY_ENV") or "OPENAI_API_KEY", "")
    return get(f"{prefix}_BASE_URL"), name, key


def chat(messages, max_tokens, prefix="OSWORLD_EVAL_MODEL", fallback=None):
    base, name, key = _settings(prefix, fallback)
    if not base or not name:
        raise RuntimeError(f"{prefix} is not configured")
    body = json.dumps({"model": name, "messages": messages, "max_tokens": max_tokens}).encode()
    request = urllib.request.Request(
        base.rstrip("/") + "/chat/completions",
        data=body,
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        reply = json.load(response)
    return reply["choices"][0]["message"]["content"]


def generate_text(prompt, max_tokens=16):
    return chat([{"role": "user", "content": prompt}], max_tokens)
