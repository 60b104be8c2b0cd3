"""Where a command sees the folders skillchat shows it: the sandbox mounts each skill
at `/skills/<name>`, the workspace at `/workspace`, the chat's scratch folder at
`/scratch`.

These names live with the skills, below the sandbox, because more than the sandbox
speaks them: a skill's `allowed-tools` rules are matched against the paths a command
uses inside (skills/allowed_tools.py), and the sandbox's layout binds the folders
there (sandbox/layout.py).
"""

SKILLS_MOUNT = "/skills"
WORKSPACE_MOUNT = "/workspace"
SCRATCH_MOUNT = "/scratch"
