// Ontology v4 (issue 11, item 4): position is not content. Symbol spans move
// from the Symbol's versioned state to the layout of the File version that
// defines them, and call-site lines become offsets from the calling symbol's
// start. Every read reaches the layout through the File key, which
// strata_file_key (0002) already indexes, so v4 needs no new constraint or
// index: this migration records the version change and adds no schema.
// Facts written under v1-v3 are left as they are (migrations never rewrite facts).
