"""Asking an MCP client's person before a sensitive action (``mae.actions.safety`` decides which ones).

The SDK offers two ways to ask, by the protocol version the client negotiated:

- up to 2025-11-25 the server sends ``elicitation/create`` in the middle of the tool call
  (``ask_now``);
- from 2026-07-28 the tool call ends with an ``InputRequiredResult`` carrying the question and an
  opaque ``request_state``; the client asks its person and calls the tool again with the answer
  (``input_required`` and ``answer_from``).

A client that declared no elicitation capability cannot ask anybody: the action is refused unless
the server was started with ``--yes``.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server.elicitation import AcceptedElicitation, render_elicitation_schema
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult
from pydantic import BaseModel, Field

APPROVAL_KEY = "mae_sensitive_action"
"""The key of the approval question in ``input_requests`` / ``input_responses``."""


class Approval(BaseModel):
    """The form a person fills in to allow or refuse one sensitive action."""

    approve: bool = Field(description="Allow this action on the phone?")


def can_ask(ctx: Context) -> bool:
    """Whether the client said it can put a question to its person (the elicitation capability)."""
    capabilities = ctx.client_capabilities
    return capabilities is not None and capabilities.elicitation is not None


def can_ask_now(ctx: Context) -> bool:
    """Whether this request may send the question mid-call (protocol 2025-11-25 and earlier)."""
    return bool(ctx.session.can_send_request)


def question(device: str, action: str, reason: str) -> str:
    return f"The phone agent wants to run a sensitive action on {device}: {action} ({reason}). Allow it?"


def refusal(action: str, reason: str, why: str) -> str:
    """The sentence a refused action is reported with."""
    return f"refused the sensitive action {action} ({reason}): {why}"


NO_ELICITATION = (
    "this MCP client cannot ask a person (it declared no elicitation capability); restart the server "
    "with --yes to allow sensitive actions without asking"
)
DECLINED = "the person declined it"


async def ask_now(ctx: Context, message: str) -> bool:
    """Ask mid-call through ``elicitation/create``; True only when the person approved (a client that
    fails to answer, or answers something else, has not approved)."""
    try:
        outcome = await ctx.elicit(message, Approval)
    except (MCPError, ValueError):
        return False
    return isinstance(outcome, AcceptedElicitation) and outcome.data.approve


def input_required(message: str, state: dict[str, Any]) -> InputRequiredResult:
    """End this round with the question; the client calls again with the answer and ``state``."""
    request = ElicitRequest(
        params=ElicitRequestFormParams(message=message, requested_schema=render_elicitation_schema(Approval))
    )
    return InputRequiredResult(input_requests={APPROVAL_KEY: request}, request_state=json.dumps(state))


def state_of(ctx: Context) -> dict[str, Any] | None:
    """The ``request_state`` this call carries back (None on a first round or when unreadable)."""
    raw = ctx.request_state
    if not raw:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def answer_from(ctx: Context) -> bool | None:
    """The person's answer carried by this call: True approved, False refused, None not answered."""
    responses = ctx.input_responses or {}
    response = responses.get(APPROVAL_KEY)
    if not isinstance(response, ElicitResult):
        return None
    if response.action != "accept":
        return False
    return bool((response.content or {}).get("approve"))
