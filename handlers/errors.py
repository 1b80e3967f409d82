"""Errors of the handlers layer: HandlerError is the root.

HandlerError
 +-- ModelError      a model call failed for good (handlers/ports.py)
 +-- ToolError       a tool could not run at all (handlers/ports.py)
 +-- TooCostly       an answer refused as too costly to read (handlers/grading/guards.py)
 +-- Unreadable      an answer outside the grader's closed vocabulary (handlers/grading/tokens.py)
 +-- GradingTimeout  reading or comparing an answer ran past its bound (handlers/grading/pipeline.py)
 +-- RunSettingsError a run's recorded settings hold garbage (handlers/run_settings.py)
 +-- ExtensionMissing a run names a domain, grader or reward the catalog lacks (handlers/catalog.py)
"""

from __future__ import annotations


class HandlerError(Exception):
    """A port, grader or decider could not do its part."""
