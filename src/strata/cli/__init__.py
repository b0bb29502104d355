"""The `strata` command line (typer + rich)."""
