"""The daemon's OpenAPI document, built from its endpoint declarations (annad.api.routing).

The daemon never serves it (no route, and the daemon does not import this module); the
tests give it to schemathesis, which generates requests from it (tests/daemon/
test_api_schema.py). Schemas come from the same pydantic models the routes validate with.
"""

from __future__ import annotations

import re
import typing
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from anna_common.protocol.records import ErrorBody
from annad import __version__
from annad.api.routing import Endpoint

_REF = "#/components/schemas/{model}"


def _reply(endpoint: Endpoint) -> type[BaseModel] | None:
    """The model a handler answers with (None for a stream; a handler that streams a long
    answer, ``Model | StreamingResponse``, writes the same document: the model's)."""
    answer = typing.get_type_hints(endpoint.handler).get("return")
    for candidate in typing.get_args(answer) or (answer,):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _body(endpoint: Endpoint) -> type[BaseModel] | None:
    """The body's model (a raw JSON body, which the service validates itself, by the model
    the endpoint documents it with, if any)."""
    return endpoint.documented if endpoint.body == "json" else endpoint.body


def document(endpoints: tuple[Endpoint, ...]) -> dict[str, Any]:
    """The OpenAPI 3.1 document describing ``endpoints``."""
    wanted: list[tuple[type[BaseModel], Any]] = [(ErrorBody, "serialization")]
    for endpoint in endpoints:
        body, reply = _body(endpoint), _reply(endpoint)
        wanted += [(body, "validation")] if body else []
        wanted += [(reply, "serialization")] if reply else []
    refs, defs = models_json_schema(list(dict.fromkeys(wanted)), ref_template=_REF)
    paths: dict[str, dict[str, Any]] = {}
    for endpoint in endpoints:
        paths.setdefault(endpoint.path, {})[endpoint.method.lower()] = _operation(endpoint, refs)
    return {"openapi": "3.1.0", "info": {"title": "annad", "version": __version__},
            "paths": paths, "components": {"schemas": defs.get("$defs", {})}}


def _operation(endpoint: Endpoint, refs: dict[Any, Any]) -> dict[str, Any]:
    name = getattr(endpoint.handler, "__name__", "route")
    parameters: list[dict[str, Any]] = [
        {"name": param, "in": "path", "required": True, "schema": {"type": "string"}}
        for param in re.findall(r"{(\w+)}", endpoint.path)]
    if endpoint.query is not None:
        schema = endpoint.query.model_json_schema()
        parameters += [{"name": key, "in": "query", "required": key in schema.get("required", ()),
                        "schema": value} for key, value in schema["properties"].items()]
    parameters += [{"name": header, "in": "header", "required": False,
                    "schema": {"type": "string"}} for header in endpoint.headers]
    reply = _reply(endpoint)
    content = ({"application/json": {"schema": refs[(reply, "serialization")]}} if reply
               else {"application/x-ndjson": {"schema": {}}})
    operation: dict[str, Any] = {
        "operationId": name, "summary": (endpoint.handler.__doc__ or name).split("\n")[0],
        "parameters": parameters,
        "responses": {"200": {"description": "success", "content": content},
                      "default": {"description": "a coded error", "content": {
                          "application/json": {"schema": refs[(ErrorBody, "serialization")]}}}}}
    body = _body(endpoint)
    if body is not None:
        operation["requestBody"] = {"required": endpoint.body_required, "content": {
            "application/json": {"schema": refs[(body, "validation")]}}}
    return operation
