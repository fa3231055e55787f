"""``core.errors.validation_message``: pydantic's errors in this project's words."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from continuity.core.errors import validation_message


class _Shape(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    count: int = 1
    on: bool = False
    port: int = Field(default=1, ge=1, le=65535)
    kind: Literal["fact", "task"] = "fact"
    since: datetime | None = None
    tags: list[str] = []

    @field_validator("count")
    @classmethod
    def _range(cls, value: int) -> int:
        if not 1 <= value <= 9:
            raise ValueError(f"must be an integer in 1–9 (got {value})")
        return value


@pytest.mark.parametrize(
    "values,expected",
    [
        ({"name": ""}, {("name",): "must not be empty"}),
        ({}, {("name",): "is required"}),
        ({"name": "a", "nmae": "b"}, {("nmae",): "is not a known field"}),
        ({"name": "a", "count": 0}, {("count",): "must be an integer in 1–9 (got 0)"}),
        ({"name": "a", "count": "x"}, {("count",): "must be an integer"}),
        ({"name": 5}, {("name",): "must be a string"}),
        ({"name": "a", "on": "yes please"}, {("on",): "must be true or false"}),
        ({"name": "a", "port": 99999}, {("port",): "must be at most 65535"}),
        ({"name": "a", "port": 0}, {("port",): "must be at least 1"}),
        ({"name": "a", "kind": "nope"}, {("kind",): "must be one of 'fact' or 'task'"}),
        (
            {"name": "a", "since": "yesterday"},
            {("since",): "must be an ISO 8601 date and time (2026-12-03T10:00:00Z)"},
        ),
        ({"name": "a", "tags": "x"}, {("tags",): "must be an array (a list)"}),
    ],
)
def test_validation_message_words(values, expected):
    """Issue 17 review: "Value error, must be…" and "String should have at least 1 character"
    reached users verbatim; the validator's own message, or ours, is what they read."""
    with pytest.raises(ValidationError) as info:
        _Shape.model_validate(values)
    assert {e["loc"]: validation_message(e) for e in info.value.errors()} == expected


def test_a_body_that_is_not_an_object():
    with pytest.raises(ValidationError) as info:
        _Shape.model_validate([])
    assert [validation_message(e) for e in info.value.errors()] == ["must be a JSON object"]
