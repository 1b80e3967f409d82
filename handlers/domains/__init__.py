"""Task domains: the prompts, answer extraction and grader a run uses (``episode.domain``)."""

from handlers.domains.base import Domain, Extractor
from handlers.domains.choice import MULTIPLE_CHOICE, extract_choice, format_choices
from handlers.domains.informal_math import MATH, extract_math_answer
from handlers.domains.registry import BUILTIN_DOMAINS, DEFAULT_DOMAIN, builtin_domains, domain_names, get_domain

__all__ = [
    "BUILTIN_DOMAINS",
    "DEFAULT_DOMAIN",
    "MATH",
    "MULTIPLE_CHOICE",
    "Domain",
    "Extractor",
    "builtin_domains",
    "domain_names",
    "extract_choice",
    "extract_math_answer",
    "format_choices",
    "get_domain",
]
