"""Running skill commands in a bubblewrap sandbox (never on the host).

    status = probe()                      # detect.py: usable here? why not?
    spec = SandboxSpec(scratch=..., skills={...}, workspace=..., network=False)
    outcome = run_in_sandbox(status.tools, spec, "python3 /skills/x/scripts/y.py",
                             on_output=print_tail)

layout.py says what a command sees (mounts, environment, limits), runner.py starts
and stops it, written.py lists the files it wrote. This layer sits above the engine
and below chats: it knows nothing of models or consent.
"""
