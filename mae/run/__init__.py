"""The run layer: one task from start to end, and what it leaves behind.

- ``loop``: the perceive → plan → act → reflect → take notes loop around an agent strategy.
- ``runtime``: builds a run's device, perceptor, clients and memory from settings.
- ``evolution``: the long-term memory's update after a task, and the self-evolving multi-task run.
- ``results``, ``stats``: why a run ended, its totals and per-step timings.
- ``trajectory``: the run's folder on disk (screenshots, ``steps.jsonl``, ``summary.json``).
- ``events``: what the run reports while it goes (for the demo, the CLI, evals and MCP).

Above this layer sit the interfaces: the demo, the CLI, evaluation and the MCP server.
"""
