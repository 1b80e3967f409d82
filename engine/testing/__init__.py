"""Test doubles and harnesses that tests, benchmarks and plugin authors share.

Like httpx's mock transports, they ship with the package so that nothing outside
``tests/`` imports from it: ``harness`` runs the real routing table in-process with a
stand-in python tool and an exact-match grader; ``event_builders`` makes events;
``secured_nats`` runs the shipped nats-server configuration (TLS and roles, certificates
from ``tls``). Nothing here is imported by the engine itself.
"""
