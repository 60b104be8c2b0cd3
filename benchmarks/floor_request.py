"""The standard-library floor of bench_peers.py: what any Python client must do.

`python floor_request.py BASE_URL SKILLS_DIR PROMPT`: read the frontmatter of
every `SKILLS_DIR/*/SKILL.md` (the name and the description), put them in a
system prompt as a catalog, send one streamed chat-completions request with
http.client, print the answer's text. No validation, no config, no chat saved, no
tools: the least work that sends the same kind of request over the same skills, so
that the time a real client takes beyond it is its own.
"""

import http.client
import json
import os
import sys
from urllib.parse import urlsplit


def header(path: str) -> dict[str, str]:
    """The `name` and `description` of a SKILL.md's frontmatter: plain or quoted
    values, and folded or literal blocks (`>`, `|`) joined on one line."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read(16384)
    if not text.startswith("---"):
        return {}
    front = text[3:].split("\n---", 1)[0].splitlines()
    found: dict[str, str] = {}
    key = None
    for line in front:
        if line[:1] in (" ", "\t") and key:
            found[key] = (found[key] + " " + line.strip()).strip()
        elif ":" in line:
            name, value = line.split(":", 1)
            value = value.strip()
            key = name.strip() if name.strip() in ("name", "description") else None
            if key:
                found[key] = "" if value[:1] in (">", "|") else value.strip("'\"")
    return found


def main() -> None:
    base, skills, prompt = sys.argv[1:4]
    catalog = []
    for entry in sorted(os.listdir(skills)):
        path = os.path.join(skills, entry, "SKILL.md")
        if os.path.isfile(path):
            found = header(path)
            name, description = found.get("name", entry), found.get("description", "")
            catalog.append({"name": name, "description": description})
    system = "You have these skills:\n" + json.dumps(catalog, ensure_ascii=False)
    body = {
        "model": "test-model",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    url = urlsplit(base)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    headers = {"Content-Type": "application/json", "Authorization": "Bearer sk-none"}
    path = url.path.rstrip("/") + "/chat/completions"
    connection.request("POST", path, json.dumps(body), headers)
    response = connection.getresponse()
    for line in response:
        if line.startswith(b"data: ") and line.strip() != b"data: [DONE]":
            for choice in json.loads(line[6:])["choices"]:
                sys.stdout.write(choice["delta"].get("content") or "")
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
