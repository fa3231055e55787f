"""``core.errors.validation_message``: pydantic's errors in this project's words."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from continuity.core.errors import validation_message


class _Shape(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    count: int = 1

    @field_validator("count")
    @classmethod
    def _range(cls, value: int) -> int:
        if not 1 <= value <= 9:
            raise ValueError(f"must be an integer in 1–9 (got {value})")
        return value


@pytest.mark.parametrize("values,expected", [
    ({"name": ""}, {("name",): "must not be empty"}),
    ({}, {("name",): "is required"}),
    ({"name": "a", "nmae": "b"}, {("nmae",): "is not a known field"}),
    ({"name": "a", "count": 0}, {("count",): "must be an integer in 1–9 (got 0)"}),
    ({"name": "a", "count": "x"},
     {("count",): "Input should be a valid integer, unable to parse string as an integer"}),
])
def test_validation_message_words(values, expected):
    """Issue 17 review: "Value error, must be…" and "String should have at least 1 character"
    reached users verbatim; the validator's own message, or ours, is what they read."""
    with pytest.raises(ValidationError) as info:
        _Shape.model_validate(values)
    assert {e["loc"]: validation_message(e) for e in info.value.errors()} == expected
