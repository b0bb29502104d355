"""Strata's MCP server: the core's reads as tools, with the API's keys and scopes."""
