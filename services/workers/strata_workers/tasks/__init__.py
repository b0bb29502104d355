"""One thin task module per layer; each task validates its job and calls the core."""
