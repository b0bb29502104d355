"""The knowledge layer: requirements, decisions and documents."""
