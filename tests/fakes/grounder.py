"""Vision requests to the fake OpenAI-compatible server: a grounder that really looks at the image.

    FakeOpenAIServer([grounding(locate)])

`grounding(locate)` is a response spec (a callable) that takes the PNG screenshot and the text of
the request (`image_url` data URL and text parts, as the OpenAI SDK sends them), calls
`locate(image: PIL.Image, text: str) -> (x, y)` and answers the point as `(x, y)`, the way grounding
models such as GTA1 or UI-TARS do. `vision_parts(request_json)` gives a request's images and texts.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable

from PIL import Image

PREFIX = "data:image/png;base64,"


def vision_parts(request: dict) -> tuple[list[Image.Image], list[str]]:
    """The PNG images and the texts of a chat-completions request's user messages."""
    images, texts = [], []
    for message in request.get("messages", []):
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            continue
        for part in content:
            if part.get("type") == "image_url":
                url = part["image_url"]["url"]
                assert url.startswith(PREFIX), f"not a PNG data URL: {url[:40]}"
                images.append(Image.open(io.BytesIO(base64.b64decode(url[len(PREFIX) :]))))
            elif part.get("type") == "text":
                texts.append(part["text"])
    return images, texts


def grounding(locate: Callable[[Image.Image, str], tuple[int, int]]):
    """A response spec answering a grounding request with the point `locate` finds."""

    def answer(request: dict) -> dict:
        images, texts = vision_parts(request)
        if len(images) != 1:
            return {"text": f"expected one screenshot, got {len(images)}"}
        x, y = locate(images[0], "\n".join(texts))
        return {"text": f"({x}, {y})"}

    return answer
