"""`python -m strata ...` is the `strata` command."""

from strata.cli.main import main

if __name__ == "__main__":
    main()
