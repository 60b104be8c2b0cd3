"""Images: PNG, JPEG, GIF and WebP read by `read_file_in_skill`, the workspace's
`read_file` and `@path` attachments are known by their bytes (not their names),
sized from their headers, sent to a model that takes images as `image_url` parts
(in a user message after the round's tool messages), described to one that does
not, capped in bytes and pixels, and never stored with the chat.

The model is the scripted server, which records every request: the tests decode the
`data:` URL it received and compare it with the file's bytes."""

from __future__ import annotations

import base64
import json
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import sent, settings_for, write_skill
from helpers import session_options, skillchat, write_files
from openai_server import ScriptedServer, call, reply

from skillchat.chats.store import ChatStore
from skillchat.engine.images import takes_images
from skillchat.safe_io.images import dimensions, image_type
from skillchat.sections import ModelSettings
from skillchat.session import Session
from skillchat.skills.registry import discover
from skillchat.ui.cards import human_size
from skillchat.workspace.files import Workspace

# A 1x1 lossless WebP, as cwebp writes it.
WEBP_1X1 = base64.b64decode("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==")
GIF_1X1 = (
    b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00"
    b"\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"
)


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width: int, height: int) -> bytes:
    """A valid grey PNG of that size (rows of zeros, deflated: small at any size)."""
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    pixels = zlib.compress(b"\x00" * ((width + 1) * height))
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def jpeg(width: int, height: int) -> bytes:
    """A JPEG's start as cameras write it: an EXIF block, then the frame header."""
    exif = b"\xff\xe1" + struct.pack(">H", 2 + 1000) + b"Exif\x00\x00" + b"\x00" * 994
    frame = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + exif + frame + b"\xff\xd9"


def webp_extended(width: int, height: int) -> bytes:
    body = b"VP8X" + struct.pack("<I", 10) + b"\x00\x00\x00\x00"
    body += (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WEBP" + body


def data_url_bytes(part: dict[str, Any]) -> tuple[str, bytes]:
    url = part["image_url"]["url"]
    head, encoded = url.split(",", 1)
    return head, base64.b64decode(encoded)


def image_parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [p for p in content if p.get("type") == "image_url"] if isinstance(content, list) else []


def test_known_by_their_bytes_and_sized_from_their_headers() -> None:
    cases = [
        (png(640, 480), "image/png", (640, 480)),
        (jpeg(1024, 768), "image/jpeg", (1024, 768)),
        (GIF_1X1, "image/gif", (1, 1)),
        (WEBP_1X1, "image/webp", (1, 1)),
        (webp_extended(3000, 2000), "image/webp", (3000, 2000)),
    ]
    for data, mime, size in cases:
        assert image_type(data[:16]) == mime
        assert dimensions(mime, data) == size
    for other in (b"PK\x03\x04", b"%PDF-1.7", b"hello", b"RIFF\x00\x00\x00\x00WAVE", b""):
        assert image_type(other) is None
    assert dimensions("image/jpeg", b"\xff\xd8\xff\xe1\x00") is None  # cut: size unknown


def test_vision_is_the_model_maps_unless_the_config_says() -> None:
    assert takes_images(ModelSettings(name="gpt-4o"))
    assert takes_images(ModelSettings(name="anthropic/claude-sonnet-4-5"))
    assert not takes_images(ModelSettings(name="openai/test-model"))  # unknown: not sent
    assert not takes_images(ModelSettings(name="gpt-4o", vision=False))
    assert takes_images(ModelSettings(name="openai/my-local-llava", vision=True))


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    skill = write_skill(root, "charts", "# Charts\nSee assets/diagram.txt.\n")
    (skill.root / "assets").mkdir()
    (skill.root / "assets" / "diagram.txt").write_bytes(png(320, 200))  # a PNG named .txt
    (skill.root / "assets" / "notes.png").write_text("plain text, named like an image\n")
    with (skill.root / "assets" / "huge.png").open("wb") as f:  # 40 MB, mostly a hole
        f.write(png(12000, 9000)[:33])
        f.truncate(40 * 1024 * 1024)
    (skill.root / "assets" / "wide.png").write_bytes(png(9000, 10))
    return root


def read_in_skill(path: str) -> dict[str, Any]:
    return call("read_file_in_skill", {"skill_name": "charts", "file_path": path})


def test_a_vision_model_receives_the_image_bytes_and_the_chat_keeps_none(
    server: ScriptedServer, skills: Path, store: ChatStore
) -> None:
    settings = settings_for(server, vision=True)
    session = Session(settings, registry=discover([skills]), store=store)
    server.script(
        reply("", calls=[read_in_skill("assets/diagram.txt"), read_in_skill("assets/notes.png")]),
        reply("A bar chart."),
    )
    result = session.send("what does the diagram show?")
    assert result.answer == "A bar chart."
    messages = sent(server)
    image, text = [m for m in messages if m["role"] == "tool"]
    assert image["content"] == (
        "[image 'assets/diagram.txt': image/png, "
        f"{len(png(320, 200)):,} bytes, 320x200; sent as an image with this result]"
    )
    assert text["content"] == "plain text, named like an image\n"
    follow = messages[-1]
    assert follow["role"] == "user" and messages[-2] is text  # after the round's results
    [part] = image_parts(follow)
    head, data = data_url_bytes(part)
    assert head == "data:image/png;base64"
    assert data == (skills / "charts" / "assets" / "diagram.txt").read_bytes()
    assert "'assets/diagram.txt' (image/png" in json.dumps(follow["content"])
    card = result.tool_calls[0].result
    assert "image/png" in card.preview and card.size == len(data)

    assert session.chat_id is not None
    stored = json.dumps(store.load_transcript(session.chat_id).messages)
    assert "base64" not in stored and "no longer attached" in stored


def test_a_model_without_images_gets_a_note_and_caps_hold(
    server: ScriptedServer, skills: Path
) -> None:
    session = Session(settings_for(server), registry=discover([skills]))
    server.script(reply("", calls=[read_in_skill("assets/diagram.txt")]), reply("noted"))
    session.send("look")
    [tool] = [m for m in sent(server) if m["role"] == "tool"]
    assert tool["content"].endswith(
        "320x200; not sent: this model is not sent images, only this description]"
    )
    assert not any(image_parts(m) for m in sent(server))

    vision = Session(settings_for(server, vision=True), registry=discover([skills]))
    server.script(
        reply("", calls=[read_in_skill("assets/huge.png"), read_in_skill("assets/wide.png")]),
        reply("too big"),
    )
    vision.send("and these?")
    huge, wide = [m["content"] for m in sent(server) if m["role"] == "tool"]
    assert "image/png, 41,943,040 bytes, 12000x9000; not sent, over the 3,750,000-byte" in huge
    assert "9000x10; not sent, over 8,000 pixels on a side (max_image_side)" in wide
    assert not any(image_parts(m) for m in sent(server))


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = write_files(tmp_path / "project", {"README.md": "# Project\n"})
    (root / "shot.png").write_bytes(jpeg(800, 600))  # a JPEG named .png
    (root / "logo.webp").write_bytes(WEBP_1X1)
    return Workspace.open(root)


def test_workspace_reads_and_attachments_send_images(server: ScriptedServer, ws: Workspace) -> None:
    session = Session(settings_for(server, vision=True), workspace=ws)
    server.script(reply("", calls=[call("read_file", {"path": "logo.webp"})]), reply("a logo"))
    session.send("what is logo.webp?")
    [tool] = [m for m in sent(server) if m["role"] == "tool"]
    file = json.loads(tool["content"])["file"]
    assert (file["mimeType"], file["width"], file["height"]) == ("image/webp", 1, 1)
    assert file["sizeBytes"] == len(WEBP_1X1) and file["isTruncated"] is False
    [part] = image_parts(sent(server)[-1])
    assert data_url_bytes(part) == ("data:image/webp;base64", WEBP_1X1)

    server.script(reply("a photo"))
    session.send("and @shot.png?")
    messages = sent(server)
    assert messages[-3]["role"] == "assistant"  # the attachment's read_file call
    assert json.loads(messages[-2]["content"])["file"]["mimeType"] == "image/jpeg"
    [part] = image_parts(messages[-1])
    assert data_url_bytes(part) == ("data:image/jpeg;base64", (ws.root / "shot.png").read_bytes())


def test_an_attachment_with_tools_off_is_a_part_of_the_message(
    server: ScriptedServer, ws: Workspace
) -> None:
    session = Session(settings_for(server, vision=True, tools=False), workspace=ws)
    server.script(reply("a photo"))
    session.send("what is in @shot.png?")
    message = sent(server)[-1]
    text, part = message["content"]
    assert text["type"] == "text" and text["text"].endswith("what is in @shot.png?")
    assert "[image 'shot.png': image/jpeg" in text["text"]
    assert data_url_bytes(part)[1] == (ws.root / "shot.png").read_bytes()


def test_the_litellm_backend_sends_the_image_too(server: ScriptedServer, skills: Path) -> None:
    settings = settings_for(server, vision=True, backend="litellm")
    session = Session(settings, registry=discover([skills]))
    server.script(reply("", calls=[read_in_skill("assets/diagram.txt")]), reply("seen"))
    session.send("look")
    [part] = image_parts(sent(server)[-1])
    assert data_url_bytes(part)[1] == (skills / "charts" / "assets" / "diagram.txt").read_bytes()


def test_ask_attaches_an_image_and_its_card_says_type_and_size(
    server: ScriptedServer, ws: Workspace, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text("vision = true\n")
    empty = tmp_path / "no-skills"
    empty.mkdir()
    server.script(reply("A photo."))
    done = skillchat(
        "ask",
        *session_options(server, empty),
        "--config",
        str(config),
        "-w",
        str(ws.root),
        "--attach",
        "shot.png",
        "what is this?",
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "A photo.\n"
    card = " ".join(done.stderr.split())
    size = (ws.root / "shot.png").stat().st_size
    assert "read_file · attached" in card and "image/jpeg" in card and "800x600" in card
    assert f"{human_size(size)} · complete" in card
    [part] = image_parts(sent(server)[-1])
    assert data_url_bytes(part)[1] == (ws.root / "shot.png").read_bytes()
