"""Running skill commands in a bubblewrap sandbox (never on the host), and
installing the packages their scripts declare in a sandbox of its own.

    status = probe()                      # detect.py: usable here? why not?
    spec = SandboxSpec(scratch=..., skills={...}, workspace=..., network=False)
    outcome = run_in_sandbox(status.tools, spec, "python3 /skills/x/scripts/y.py",
                             on_output=print_tail)

layout.py says what a command sees (mounts, environment, limits), protect.py which
workspace entries stay read-only under workspace writes, runner.py starts and stops
it, written.py lists the files it wrote, skill_here.py shows a skill's own files in
/scratch so that its SKILL.md's relative paths (`python scripts/x.py`) run there.
command_tool.py is what a `run_command` call does (arguments, the allowed-tools
policy, the user's consent, the result); setup.py builds it for a session, reading
the session's live registry and settings at each command. envs/ installs what a
skill's scripts declare (uv, npm) and mounts it read-only. This layer sits above the
engine and below the recorder and the session (tests/test_layers.py): the
model-facing tool (tools/run_command.py) knows only a `CommandRunner`, which the
session hands it when it makes the tool.
"""
