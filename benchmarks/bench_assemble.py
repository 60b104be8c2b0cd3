"""Tool-call arguments are assembled in linear time: 5 MB in 100-byte fragments.

    python benchmarks/bench_assemble.py

Target: well under a second (appending to a growing string made it minutes).
"""

import time

from skillchat.engine.assemble import Assembler
from skillchat.engine.events import Delta, ToolCallFragment

piece = "x" * 100
deltas = [Delta(tool_calls=(ToolCallFragment(0, "c1", "get_skill", None),))] + [
    Delta(tool_calls=(ToolCallFragment(0, None, None, piece),)) for _ in range(50_000)
]
t = time.perf_counter()
a = Assembler()
for d in deltas:
    a.add(d)
r = a.reply()
took = time.perf_counter() - t
print(f"{len(r.tool_calls[0].arguments):,} characters in 100-byte pieces: {took:.3f} s")
print(f"target: < 1 s -> {'met' if took < 1 else 'MISSED'}")
