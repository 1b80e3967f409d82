"""Auditing recorded rewards: regrade plans, the flip report, and regraded rewards for export.

Pure readers of run histories; the engine grades, appends and prints (`apollo regrade`).
"""
