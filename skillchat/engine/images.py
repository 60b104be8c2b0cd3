"""Images in the conversation: which models are sent them, and how they travel.

A tool result in the chat-completions format is text only (OpenAI's API takes no
image part in a `tool` message), so an image a tool read goes in the standard way
clients use for it: the tool message holds the image's note (type, size,
dimensions), and one `user` message right after the round's tool messages holds
the images, each an `image_url` part with a `data:` URL, named by the file it came
from. LiteLLM turns that into each provider's own form (Anthropic's, Gemini's). An
attachment with tools off is an `image_url` part of the user message itself.

A model is sent images when the config's `vision` says so (`vision = true|false`,
also per `[models.NAME]`), else when litellm's model map marks it
`supports_vision`; a model the map does not know (a local server's) is not, and
gets the note alone. The chat database keeps no image: the store replaces each
part with a line naming it (chats/messages.py), so a resumed chat says the image
is no longer attached and the model reads the file again if it needs it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from skillchat.chats.messages import is_image_part
from skillchat.engine.pricing import model_entry
from skillchat.sections import ModelSettings

if TYPE_CHECKING:
    from skillchat.safe_io.images import Image

# What an image counts for in the context budget (characters): about what providers
# bill a full-size image (1,600 tokens), whatever the length of its base64.
IMAGE_CHARS = 6_400
IMAGES_INTRO = "The images read by the tool calls above (a tool result cannot carry one):"


def takes_images(model: ModelSettings) -> bool:
    """Whether the chat's model is sent images (see the module docstring)."""
    if model.vision is not None:
        return model.vision
    if model.gguf:  # the embedded server loads no image projector
        return False
    name = model.name
    entry = model_entry(name) or model_entry(name.removeprefix("openai/"))
    return bool(entry and entry.get("supports_vision") is True)


def image_part(image: Image) -> dict[str, Any]:
    """`image` inline, as every OpenAI-compatible server and LiteLLM take it."""
    return {"type": "image_url", "image_url": {"url": image.data_url()}}


def images_message(images: Sequence[tuple[str, Image]]) -> dict[str, Any]:
    """The user message after a round's tool messages carrying their images, each
    after a line naming the call (`label`) and the file."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": IMAGES_INTRO}]
    for label, image in images:
        parts.append({"type": "text", "text": f"{label}: '{image.path}' ({image.describe()})"})
        parts.append(image_part(image))
    return {"role": "user", "content": parts}


def without_image_data(content: Any) -> Any:
    """`content` with each image part as a short text: what a summary request or a
    size estimate should see of it."""
    if not isinstance(content, list):
        return content
    return [{"type": "text", "text": "[image]"} if is_image_part(p) else p for p in content]


def images_in(content: Any) -> int:
    """How many image parts `content` has (text content has none)."""
    return sum(1 for p in content if is_image_part(p)) if isinstance(content, list) else 0


def content_size(message: dict[str, Any]) -> int | None:
    """The size of a message holding images, each counted as IMAGE_CHARS; None for
    one without (the caller measures its JSON)."""
    count = images_in(message.get("content"))
    if not count:
        return None
    text = {**message, "content": without_image_data(message["content"])}
    return len(json.dumps(text, ensure_ascii=False)) + count * IMAGE_CHARS
