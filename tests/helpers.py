"""Small helpers shared by the tests."""

from __future__ import annotations

import uuid


def unique_topic(prefix: str = "t") -> str:
    """A topic name no other test uses."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"
