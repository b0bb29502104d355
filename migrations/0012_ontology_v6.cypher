// Ontology v6 (issue 14): a reviewer's decision on a card's prose (status
// approved or rejected; reviewed_by, reviewed_at, review_note), all optional
// properties of the Card's STATE facts. No new key, constraint or index: this
// migration records the version change and adds no schema.
