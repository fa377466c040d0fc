"""The action layer: what the agents may do on a phone, how a reply names it, and how it is carried out.

- ``registry``: the paper's atomic actions and Shortcuts as typed models, with the prompt text that
  describes them and the validation that makes one from a name and arguments.
- ``reply_text`` and ``reading``: reading an action (and other fields) out of what a model wrote.
- ``execution``: running an action on a ``Device`` and waiting for the screen to settle.
- ``annotate``: drawing an action on the screenshot it was taken on.
- ``safety``: which actions need a person's approval before they run.

Below this layer sit the device and perception; above it the memory, the agents and the run.
"""
