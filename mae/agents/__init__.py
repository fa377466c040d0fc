"""The reasoning agents of Mobile-Agent-E: Manager, Operator, Action Reflector, Notetaker.

Each agent is a prompt template under ``prompts/`` plus a function from working memory and screens to a
parsed, validated reply (``mae.agents.manager``, ``operator``, ``reflector``, ``notetaker``).
"""
