"""The MCP server: the phone, the Perceptor and the whole agent as Model Context Protocol tools.

``python -m mae mcp`` serves them over stdio (desktop clients) or streamable HTTP on 127.0.0.1, built on
the official ``mcp`` SDK. ``server`` defines the tools, ``views`` the typed results they return,
``phones`` the devices and their image spaces, ``approval`` the sensitive-action questions and ``jobs``
the agent runs behind ``run_task``. See docs/mcp.md.
"""
