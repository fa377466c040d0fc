"""Defaults the agents start from when no long-term memory is given: the paper's four initial Tips."""

from __future__ import annotations

INITIAL_TIPS = """\
1. Do not add any payment information. If you are asked to sign in, ignore it or sign in as a guest if \
possible. Close any pop-up windows when opening an app.
2. By default, no apps are open in the background.
3. Screenshots may show partial text in text boxes from your previous input; this does not count as an error.
4. When creating new Notes, you do not need to enter a title unless the user specifically requests it."""
"""The initial Tips (paper §2.2), as a numbered list."""
