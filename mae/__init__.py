"""mae: a faithful, faster, sturdier implementation of Mobile-Agent-E.

The library is importable without Gradio; the web demo lives in ``app.py``.
"""

__version__ = "0.1.0"
