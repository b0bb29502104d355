"""The HTTP edge of Strata: GraphQL, webhooks, health and metrics."""
