"""Gemini and OpenAI's own API on the fast path (engine/backends/openai_backend.py
over wire.py, no LiteLLM, no SDK): `gemini/...` models go to Google's
OpenAI-compatible endpoint with `GEMINI_API_KEY` as their Bearer key, and requests
to OpenAI's own API carry a `prompt_cache_key`, one per chat.

OpenAI's own API is played by the scripted server behind a CONNECT proxy on
127.0.0.1 (`HTTPS_PROXY`) that answers `api.openai.com`'s tunnel itself, with TLS
under a certificate made for the test and trusted through `SSL_CERT_FILE`: the path
a real request takes, URL and TLS included, and nothing leaves this machine."""

from __future__ import annotations

import re
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from anthropic_server import AnthropicServer
from anthropic_server import call as anthropic_call
from anthropic_server import reply as anthropic_reply
from helpers import one_line_error, skillchat
from openai_server import ScriptedServer, call, reply

HOSTED = "llm.provider.example"  # a hosted OpenAI-compatible API, played by the server
SKILLS = Path(__file__).resolve().parents[1] / "skillchat" / "bundled_skills"
LOAD = call("get_skill", {"skill_name": "calculator"})
PROBE = """
import sys
from skillchat.cli.app import run
code = run(sys.argv[1:])
print(code, sorted(m for m in ('litellm', 'openai', 'httpx') if m in sys.modules), file=sys.stderr)
"""


def test_gemini_goes_to_its_openai_compatible_endpoint_without_litellm(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-test-key-1234")
    server.script(reply(calls=[LOAD]), reply("39.1"))
    argv = ["ask", "--model", "gemini/gemini-2.5-flash", "--api-base", server.base_url]
    argv += ["--skills-dir", str(SKILLS), "--max-tokens", "500", "17% of 230?"]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.stdout == "39.1\n", done.stderr
    assert done.stderr.strip().splitlines()[-1] == "0 []"  # no litellm, no SDK
    first = server.completions[0]
    assert first.body["model"] == "gemini-2.5-flash" and first.body["max_tokens"] == 500
    assert first.headers["authorization"] == "Bearer gemini-test-key-1234"
    assert "prompt_cache_key" not in first.body  # not OpenAI's API


def test_gemini_without_its_key_is_one_line_before_anything_is_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    done = skillchat("ask", "--model", "gemini/gemini-2.5-flash", "hi")
    assert one_line_error(done) == (
        "skillchat: error: GEMINI_API_KEY is not set: export it or `skillchat keys set` it "
        "(or pass --api-base for a proxy that holds it), "
        "or run a model on this machine with no key: --local (or --gguf FILE)"
    )


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate (its own authority) for api.openai.com,
    api.anthropic.com and a hosted OpenAI-compatible provider's name, and its key."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2",
         "-subj", "/CN=api.openai.com",
         "-addext", f"subjectAltName=DNS:api.openai.com,DNS:api.anthropic.com,DNS:{HOSTED}",
         "-addext", "basicConstraints=critical,CA:TRUE"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


class Tunnels:
    """A CONNECT proxy that ends every tunnel itself: TLS with `context`, then the
    scripted server's handler on the decrypted stream."""

    def __init__(self, server: ScriptedServer, context: ssl.SSLContext) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.asked: list[str] = []  # the CONNECT lines
        self._server, self._context = server, context
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, address = self.listener.accept()
            except OSError:
                return
            head = b""
            while b"\r\n\r\n" not in head:
                head += conn.recv(4096)
            self.asked.append(head.split(b"\r\n")[0].decode())
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            tls = self._context.wrap_socket(conn, server_side=True)
            self._server.process_request(tls, address)


@pytest.fixture
def openai_api(
    server: ScriptedServer, certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Tunnels]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    tunnels = Tunnels(server, context)
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{tunnels.port}")
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    yield tunnels
    tunnels.listener.close()


def test_openais_own_api_gets_one_prompt_cache_key_per_chat(
    server: ScriptedServer, openai_api: Tunnels
) -> None:
    server.when("first chat", reply(calls=[LOAD]), reply("39.1"))
    server.when("second chat", reply("other"))
    for question, answer in (("first chat: 17% of 230?", "39.1"), ("second chat", "other")):
        done = skillchat("ask", "--model", "gpt-4.1-mini", "--skills-dir", str(SKILLS), question)
        assert done.returncode == 0 and done.stdout.strip() == answer, done.stderr
    assert openai_api.asked == ["CONNECT api.openai.com:443 HTTP/1.0"] * 2  # one per chat
    keys = [r.body["prompt_cache_key"] for r in server.completions]
    assert keys[0] == keys[1] != keys[2]  # the chat's rounds share it; another chat has its own
    assert all(r.path == "/v1/chat/completions" for r in server.completions)


def test_no_prompt_cache_key_for_another_server(server: ScriptedServer) -> None:
    server.script(reply("fine"))
    done = skillchat("ask", "--model", "gpt-4.1-mini", "--api-base", server.base_url, "hi")
    assert done.returncode == 0, done.stderr
    assert "prompt_cache_key" not in server.completions[0].body


def test_a_hosted_api_base_is_never_asked_for_props(
    server: ScriptedServer, openai_api: Tunnels
) -> None:
    """Only a server on this machine or a private network may be llama.cpp's: a hosted
    one gets the chat's request and nothing else, through one tunnel."""
    server.props = {"default_generation_settings": {"n_ctx": 4096}}
    server.script(reply(calls=[LOAD]), reply("39.1"))
    done = skillchat(
        "ask", "--model", "some-model", "--api-base", f"https://{HOSTED}/v1",
        "--skills-dir", str(SKILLS), "x" * 5_000,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "39.1", done.stderr
    assert [r.path for r in server.requests] == ["/v1/chat/completions"] * 2
    assert openai_api.asked == [f"CONNECT {HOSTED}:443 HTTP/1.0"]


def test_anthropics_own_api_prices_the_cache_and_says_what_it_saved(
    certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user with ANTHROPIC_API_KEY alone: the chat goes to Anthropic's own API (its
    prices known), and the usage line says what the prompt cache saved on them."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-real")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with AnthropicServer(prompt_cache=True) as server:
        tunnels = Tunnels(server, context)
        monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{tunnels.port}")
        server.script(
            anthropic_reply(calls=[anthropic_call("list_skills")]), anthropic_reply("done")
        )
        done = skillchat("ask", "--skills-dir", str(SKILLS), "hi")  # no model named
        tunnels.listener.close()
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stderr
    assert tunnels.asked == ["CONNECT api.anthropic.com:443 HTTP/1.0"]
    match = re.search(
        r"in \(([\d,]+) cached\).* · \$([\d.]+) \(the cache saved \$([\d.]+)\)", done.stderr
    )
    assert match, done.stderr
    assert int(match[1].replace(",", "")) > 0 and float(match[3]) > 0
