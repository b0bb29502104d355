"""Entry point: ``uvicorn --factory strata_api.main:create``.

The one place the API process reads its settings.
"""

from __future__ import annotations

from fastapi import FastAPI

from strata import logs
from strata.settings import load_settings
from strata_api.app import create_app


def create() -> FastAPI:
    settings = load_settings()
    logs.configure(level=settings.log_level, json=settings.log_json)
    return create_app(settings)
