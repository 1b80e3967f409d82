"""Task domains: the prompts, answer extraction and grader a run uses (``episode.domain``)."""

from handlers.domains.base import Domain, Extractor
from handlers.domains.choice import (
    MULTIPLE_CHOICE,
    extract_choice,
    format_choices,
    grade_choice,
    normalise_choice,
)
from handlers.domains.informal_math import MATH, extract_math_answer
from handlers.domains.registry import (
    DEFAULT_DOMAIN,
    builtin_domains,
    domain_names,
    domain_of,
    get_domain,
    install_plugins,
    register_builtin,
)

register_builtin(MATH)
register_builtin(MULTIPLE_CHOICE)

__all__ = [
    "DEFAULT_DOMAIN",
    "MATH",
    "MULTIPLE_CHOICE",
    "Domain",
    "Extractor",
    "builtin_domains",
    "domain_names",
    "domain_of",
    "extract_choice",
    "extract_math_answer",
    "format_choices",
    "get_domain",
    "grade_choice",
    "install_plugins",
    "normalise_choice",
    "register_builtin",
]
