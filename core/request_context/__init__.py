"""The request context stored beside a conversation's messages: tools, tool choice, provider, model, parameters."""

from core.request_context.shapes import (
    RequestFieldError,
    check_parameters,
    read_tool_choice,
    read_tools,
    tool_choice_json,
    tool_json,
    tools_of_json,
)
from core.request_context.stored import (
    REQUEST_FIELDS,
    StoredRequest,
    check_tool_choice,
    params_json,
    read_params,
    read_request,
    request_json,
    to_options,
)

__all__ = [
    "REQUEST_FIELDS",
    "RequestFieldError",
    "StoredRequest",
    "check_parameters",
    "check_tool_choice",
    "params_json",
    "read_params",
    "read_request",
    "read_tool_choice",
    "read_tools",
    "request_json",
    "to_options",
    "tool_choice_json",
    "tool_json",
    "tools_of_json",
]
