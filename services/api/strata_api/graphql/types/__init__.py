"""GraphQL types: one per module, each built from a domain object with ``from_domain``."""
