"""What every terminal-facing part shares: argument types and the one-line status display.

Below the CLI so that the trainer's progress line and the fake model server's own command
line use them without importing the CLI.
"""
