"""One module per ``harness`` subcommand; each exposes ``register(subparsers)``."""

import argparse


def add_command(sub, name: str, summary: str, example: str) -> argparse.ArgumentParser:
    """A subcommand parser whose help ends with a worked example."""
    return sub.add_parser(name, help=summary, description=f"{summary}\n\nExample:\n  {example}",
                          formatter_class=argparse.RawDescriptionHelpFormatter)
