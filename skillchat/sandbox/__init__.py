"""Running skill commands in a bubblewrap sandbox (never on the host).

    status = probe()                      # detect.py: usable here? why not?
    spec = SandboxSpec(scratch=..., skills={...}, workspace=..., network=False)
    outcome = run_in_sandbox(status.tools, spec, "python3 /skills/x/scripts/y.py",
                             on_output=print_tail)

layout.py says what a command sees (mounts, environment, limits), runner.py starts
and stops it, written.py lists the files it wrote. command_tool.py is what a
`run_command` call does (arguments, the allowed-tools policy, the user's consent,
the result); setup.py builds it for a chat. This layer sits above the engine and
below chats: the model-facing tool (tools/run_command.py) only sees the runner
through the `ToolContext`.
"""
