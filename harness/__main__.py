from harness.cli import program

program()
