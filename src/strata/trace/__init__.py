"""The traceability layer: requirement -> symbol -> test links with status and evidence."""
