"""graphiti-core 0.31.2 still declares one pydantic v1-style config: keep that out of the
test report (it is imported here first, inside a filter)."""

from __future__ import annotations

import warnings

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message=r".*class-based `config` is deprecated")
    import graphiti_core.driver.search_interface.search_interface  # noqa: F401
