"""Celery workers of Strata: one queue per layer, thin tasks over the core."""
