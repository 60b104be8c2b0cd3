"""A tiny npm registry on 127.0.0.1 for the Node environment tests: the packages are
tarballs `npm pack` made in the test, so npm installs through the same path as from
the real registry (`npm_config_registry`), with nothing fetched from the network."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


def npm_pack(folder: Path, name: str, version: str = "1.0.0", code: str = "") -> Path:
    """`npm pack` of a package `name` whose index.js is `code` (and whose install
    script, if npm ever ran it, would leave `ran.txt` in the package's folder)."""
    src = folder / f"src-{name}-{version}"
    src.mkdir(parents=True)
    manifest = {
        "name": name,
        "version": version,
        "main": "index.js",
        "scripts": {"install": "echo ran > ran.txt"},
    }
    (src / "package.json").write_text(json.dumps(manifest))
    (src / "index.js").write_text(code or f"module.exports = {{ name: '{name}' }};\n")
    return pack(src, folder)


def pack(src: Path, folder: Path) -> Path:
    """`npm pack` of the package folder `src`, into `folder`: the tarball."""
    done = subprocess.run(
        ["npm", "pack", "--pack-destination", str(folder), "--ignore-scripts"],
        cwd=src,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return folder / done.stdout.strip().splitlines()[-1]


class Registry:
    """Serves a packument and the tarball of each packed package."""

    def __init__(self, tarballs: list[tuple[str, str, Path]]) -> None:
        self.tarballs = {f"/{n}/-/{t.name}": t for n, _v, t in tarballs}
        self.packages = tarballs
        self.requests: list[str] = []
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                registry.requests.append(self.path)
                body = registry.answer(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def lock_entry(self, name: str, version: str) -> dict[str, str]:
        """A lockfile's entry for one packed version, as npm writes it."""
        (tarball,) = [t for n, v, t in self.packages if (n, v) == (name, version)]
        digest = hashlib.sha512(tarball.read_bytes()).digest()
        return {
            "version": version,
            "resolved": f"{self.url}{name}/-/{tarball.name}",
            "integrity": "sha512-" + base64.b64encode(digest).decode(),
        }

    def answer(self, path: str) -> bytes | None:
        if path in self.tarballs:
            return self.tarballs[path].read_bytes()
        name = path.strip("/").replace("%2f", "/").replace("%2F", "/")
        versions = {}
        for pkg, version, tarball in self.packages:
            if pkg != name:
                continue
            data = tarball.read_bytes()
            integrity = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
            versions[version] = {
                "name": pkg,
                "version": version,
                "dist": {
                    "tarball": f"{self.url}{pkg}/-/{tarball.name}",
                    "shasum": hashlib.sha1(data).hexdigest(),
                    "integrity": integrity,
                },
            }
        if not versions:
            return None
        latest = sorted(versions)[-1]
        return json.dumps(
            {"name": name, "dist-tags": {"latest": latest}, "versions": versions}
        ).encode()


@pytest.fixture(scope="session")
def tinynode_tarballs(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str, Path]]:
    """`tinynode` 1.0.0 (answer 41) and 1.1.0 (answer 42), packed once per run (per
    worker): an `npm pack` costs about half a second of CPU, and the tarballs are
    only read."""
    folder = tmp_path_factory.mktemp("tarballs")
    return [
        ("tinynode", v, npm_pack(folder, "tinynode", v, f"module.exports = {{ answer: {a} }};\n"))
        for v, a in (("1.0.0", 41), ("1.1.0", 42))
    ]


@pytest.fixture
def npm_registry(
    tinynode_tarballs: list[tuple[str, str, Path]], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Registry]:
    """`tinynode_tarballs` on a local registry of the test's own that npm is pointed at."""
    registry = Registry(tinynode_tarballs)
    monkeypatch.setenv("npm_config_registry", registry.url)
    yield registry
    registry.server.shutdown()
