"""Per-skill environments: the packages a skill's scripts declare (Python's, and
Node's in a package.json), installed from wheels only (npm: with no scripts) in a
sandbox of their own, stored once per declared set under the data folder, and
mounted read-only into the command's sandbox.

    declared.py   what a command's script declares (PEP 723, requirements.txt, the
                  config's `[packages]`), and the lines a safe install refuses
    store.py      where environments live, their key, lock, record, pruning
    install.py    uv in a sandbox with the network on and nothing else writable
    provider.py   what `run_command` asks before a run: is an environment needed,
                  ready, may it be installed
    notes.py      what a run's output says is missing (a module, a program)
    node.py       what a Node script declares (package.json, lockfile), and the
                  specs and lockfile entries refused
    npm_install.py  npm --ignore-scripts in a sandbox; node_modules at /node_modules
    resolve.py    versions and download sizes for the consent card
"""
