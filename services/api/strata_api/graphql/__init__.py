"""The agents' GraphQL API (strawberry): one type per module, schema.py assembles."""
