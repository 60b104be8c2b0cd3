"""Install a Node script's packages with npm, in a sandbox of its own, running no
package code; made, stored and shared like a Python environment
(skillchat/sandbox/envs/install.py, store.py).

The sandbox is a command's (skillchat/sandbox/layout.py) with:

    /opt/skillchat/node       where npm works: a tmpfs of the size cap, given the
                              package.json skillchat wrote (dependency tables
                              only) and the skill's lockfile; npm makes
                              node_modules/ there
    /opt/skillchat/node-out   the new environment, writable: those two files, and
                              node_modules/ copied there once npm is done
    /opt/skillchat/npm-cache  npm's cache: an empty tmpfs of the size cap, this
                              install's alone, gone when it ends (as uv's: install.py)
    the network               on: the registry is reached from inside

npm is the system's (`/usr/bin/npm`, read-only with the system folders). Nothing
else of the host: no home (no ~/.npmrc and its tokens), no data folder, no other
environment. The registry is the one npm's variables name (`npm_config_registry`)
and proxies pass through; a CA bundle (`SSL_CERT_FILE`) is bound read-only.

No package code runs: `--ignore-scripts` (no `preinstall`/`install`/
`postinstall`/`prepare` of any package), the skill's own package.json never reaches
npm (so its `scripts` are not there), `git` is `/bin/false` for npm (a dependency
from version control cannot be fetched, nor built), and specs that are not
registry ranges were refused before (envs/node.py). The environment's
`node_modules` is then bound read-only at `/node_modules` for the skill's commands:
Node looks for packages in every parent folder of the script, up to `/`, for
`require()` and `import` alike (NODE_PATH, set too, counts for `require()` only).
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from skillchat.errors import InstallFailed
from skillchat.sandbox.detect import Tools
from skillchat.sandbox.envs.install import (
    CERT_MOUNT,
    PROXY_VARIABLES,
    InstallLimits,
    cache_size,
    fetched,
    finish,
    install_spec,
    made_once,
    run_install,
)
from skillchat.sandbox.envs.node import NodeDeclaration, node_key
from skillchat.sandbox.envs.store import EnvStore, Record, fingerprint
from skillchat.sandbox.layout import PATH
from skillchat.sandbox.runner import NOBODY

NODE_ENV_MOUNT = "/opt/skillchat/node"
NODE_OUT_MOUNT = "/opt/skillchat/node-out"
NPM_CACHE_MOUNT = "/opt/skillchat/npm-cache"
NODE_MODULES_MOUNT = "/node_modules"
NODE = "/usr/bin/node"
NPM = "/usr/bin/npm"
PASSED_VARIABLES = (
    "npm_config_registry",
    "NPM_CONFIG_REGISTRY",
    "npm_config_proxy",
    "npm_config_https_proxy",
    "npm_config_noproxy",
    *PROXY_VARIABLES,
)


@functools.cache
def node_version() -> str:
    """The version of the Node commands run (`node` inside the sandbox), or ""."""
    try:
        done = subprocess.run(
            [NODE, "--version"], capture_output=True, text=True, check=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip().lstrip("v")


def node_env_key(found: NodeDeclaration) -> str:
    return node_key(found, node_version())


def node_binds(env: Path) -> tuple[tuple[Path, str, bool], ...]:
    """What a command of a skill with this Node environment gets mounted."""
    return ((env / "node_modules", NODE_MODULES_MOUNT, False),)


NODE_RUN_ENV = {"NODE_PATH": NODE_MODULES_MOUNT, "PATH": f"{NODE_MODULES_MOUNT}/.bin:{PATH}"}


def ensure_node(
    store: EnvStore,
    found: NodeDeclaration,
    tools: Tools,
    *,
    limits: InstallLimits | None = None,
    progress: Callable[[str], None] = lambda line: None,
) -> tuple[Record, bool]:
    """The environment of `found`: (its record, whether it was installed now)."""
    bounds = limits or InstallLimits()
    if not node_version() or not os.path.exists(NPM):
        raise InstallFailed("Node packages need `node` and `npm`, which are not installed here")

    def build(staging: Path) -> Record:
        return _install(key, found, staging, tools, bounds, progress)

    key = node_env_key(found)
    return made_once(store, key, build)


def _install(
    key: str,
    found: NodeDeclaration,
    staging: Path,
    tools: Tools,
    limits: InstallLimits,
    progress: Callable[[str], None],
) -> Record:
    env, work = staging / "env", staging / "work"
    for folder in (env, work):
        folder.mkdir(mode=0o755)
    (env / "package.json").write_text(found.installed_manifest())
    if found.lock is not None:
        (env / "package-lock.json").write_text(found.lock)
    if os.geteuid() == 0:  # the install runs as nobody
        for path in (env, *env.iterdir()):
            os.chown(path, NOBODY, NOBODY)
    binds = [(env, NODE_OUT_MOUNT, True)]
    variables = {n: os.environ[n] for n in PASSED_VARIABLES if n in os.environ}
    cert = os.environ.get("SSL_CERT_FILE")
    if cert and Path(cert).is_file():
        binds.append((Path(cert).resolve(), CERT_MOUNT, False))
        variables["npm_config_cafile"] = CERT_MOUNT
    variables |= {
        "npm_config_cache": NPM_CACHE_MOUNT,
        "npm_config_git": "/bin/false",
        "npm_config_update_notifier": "false",
        "npm_config_fund": "false",
        "npm_config_audit": "false",
        "npm_config_fetch_timeout": str(limits.http_timeout_s * 1000),
        "npm_config_fetch_retries": "1",
        "npm_config_fetch_retry_mintimeout": "1000",
        "npm_config_fetch_retry_maxtimeout": "5000",
        "npm_config_userconfig": "/nonexistent/user-npmrc",
        "npm_config_globalconfig": "/nonexistent/global-npmrc",
    }
    # npm unpacks each package straight into node_modules (its cache holds only
    # tarballs), so node_modules is made in RAM, within the cap (a tarball that
    # expands past it stops there), then copied into the environment on disk.
    command = (
        f"cp {NODE_OUT_MOUNT}/*.json {NODE_ENV_MOUNT}/ && cd {NODE_ENV_MOUNT} && "
        f"{NPM} install --ignore-scripts --omit=dev --no-audit --no-fund --loglevel=http"
        f" && cp -a node_modules {NODE_OUT_MOUNT}/ && {cache_size(NPM_CACHE_MOUNT)}"
    )
    spec = install_spec(work, binds, limits, NODE_ENV_MOUNT, NPM_CACHE_MOUNT)
    start = time.monotonic()
    what = ", ".join(found.packages)
    run_install(tools, spec, command, variables, limits, progress, what, npm_reason)
    installed = installed_node_packages(env)
    size = finish(env, limits, len(installed))
    return Record(
        key=key,
        requested=list(found.packages),
        python=node_version(),
        installed=installed,
        size_bytes=size,
        fetched_bytes=fetched(work),
        duration_ms=int((time.monotonic() - start) * 1000),
        fingerprint=fingerprint(env),
        kind="node",
    )


_FIELD = re.compile(r"^\w+: (?:'|\d)")  # the error object's fields: `port: 9`


def npm_reason(stderr: str) -> str:
    """npm's error on one line: its `npm error` messages, without the error's code
    fields, stack, the log's path and the proxy advice."""
    noise = ("complete log", "behind a proxy", "npm help")
    fields = ("code ", "syscall ", "errno ", "at ")
    lines = [
        line.removeprefix("npm error").strip()
        for line in stderr.splitlines()
        if line.startswith("npm error")
    ]
    kept = [
        ln
        for ln in lines
        if ln
        and not ln.startswith(fields)
        and not ln.endswith((",", "{", "}"))
        and not _FIELD.match(ln)
        and not any(n in ln for n in noise)
    ]
    return " ".join(kept[:2]) or " ".join(lines[:1]) or "npm printed no error"


def installed_node_packages(env: Path) -> list[dict[str, str]]:
    """Name, version and integrity of each installed package, from npm's own record
    of node_modules (`node_modules/.package-lock.json`, read as data)."""
    try:
        data = json.loads((env / "node_modules" / ".package-lock.json").read_text())
    except (OSError, ValueError):
        return []
    out = []
    for path, entry in sorted((data.get("packages") or {}).items()):
        if not path or not isinstance(entry, dict):
            continue
        out.append(
            {
                "name": path.rsplit("node_modules/", 1)[-1],
                "version": str(entry.get("version", "?")),
                "integrity": str(entry.get("integrity", "")),
            }
        )
    return out
