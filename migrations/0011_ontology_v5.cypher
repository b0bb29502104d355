// Ontology v5 (issue 14): a Card's model prose state (status, review, draft,
// drafts, tokens, cost), all optional properties of the Card's STATE facts.
// No new key, constraint or index: this migration records the version change
// and adds no schema.
