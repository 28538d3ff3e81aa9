"""What every command line of the package shares: argparse with errors in the project's one-line form, and the
progress line on stderr."""
import argparse
import sys

# ./ladder tells the driver, by this exit status of --check, that it printed the help and there is nothing to build.
HELP_SHOWN = 3


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class OneLineParser(argparse.ArgumentParser):
    """argparse, with its errors in the project's one-line form instead of a usage block."""

    def error(self, message):
        say(f"ladder: error: {message} (see {self.prog} --help)")
        sys.exit(2)
