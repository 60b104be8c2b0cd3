"""Where the sandbox shows a chat's folders to a command, as paths inside it.

Two layers need these names: the sandbox mounts the folders there
(sandbox/layout.py), and a trusted skill's `allowed-tools` rules are judged against
them (skills/allowed_tools.py: `Bash(python /skills/pdf/x.py)` names a script by
where the command will see it). They live below both so that neither reaches up.
"""

from __future__ import annotations

SKILLS_MOUNT = "/skills"
WORKSPACE_MOUNT = "/workspace"
SCRATCH_MOUNT = "/scratch"
# A plugin's skill (skills/plugin_install.py) also sees its plugin's folder, read-only,
# and its data folder, writable: ${PLUGIN_ROOT} and ${PLUGIN_DATA} inside the sandbox.
PLUGIN_MOUNT = "/plugin"
PLUGIN_DATA_MOUNT = "/plugin-data"


def start_folder(workspace: bool) -> str:
    """Where a command starts: the workspace if there is one, else the scratch."""
    return WORKSPACE_MOUNT if workspace else SCRATCH_MOUNT
